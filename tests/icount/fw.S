/*
 * A 64 KiB x86 firmware for tests/icount/test_icount.py: no kernel, no
 * disk, only the PIT, the PIC and three ISA ports.  It runs in real mode
 * from the reset vector and reads the TSC, which under -icount is
 * QEMU_CLOCK_VIRTUAL: the guest-visible virtual time.
 *
 * MODE=1 (halt): ITER times, arm the PIT (one-shot, mode 0), execute
 *   WORK loop iterations, and HLT until its interrupt.  Each wake-up
 *   re-arms the PIT from the time the guest woke, so a wake-up late by
 *   any amount shifts everything after it.  Prints the TSC every 1024
 *   iterations and at the end.
 * MODE=2 (stop): ITER times, arm the PIT, stop the VM with pvpanic
 *   (-action panic=pause; the host answers with "cont"), print the TSC
 *   at once, then HLT until the PIT's interrupt.  The TSC read right
 *   after the stop shows whether the clock moved while the stop was
 *   pending.
 * Both: the RTC's periodic interrupt runs at 8192 Hz, masked.  With
 *   -rtc clock=rt its timer is on the host's clock: it wakes QEMU's main
 *   loop at moments unrelated to the guest's, and nothing else.
 *
 * Output: lines of 16 hex digits on the debug console (port 0xe9), then
 * "end"; then isa-debug-exit (port 0xf4) ends QEMU.
 *
 *   as --32 --defsym MODE=1 --defsym ITER=n --defsym WORK=n -o fw.o fw.S
 *   ld -m elf_i386 -Ttext=0 --oformat binary -o fw.bin fw.o
 */
        .code16
        .text

        .equ FLAG, 0x500                /* set by the IRQ 0 handler */
        .equ PIT_COUNT, 200             /* 200 / 1.193182 MHz: 168 us */

        .globl _start
_start:
        cli
        xorw %ax, %ax
        movw %ax, %ds
        movw %ax, %ss
        movw $0x7000, %sp
        movb $0, FLAG
        /* IVT entry 8 (IRQ 0 once the PIC is based at 8): irq0 */
        movw $irq0, 0x20
        movw $0xf000, 0x22
        /*
         * The local APIC comes out of reset with LINT0 masked, which
         * keeps the PIC's interrupts away: disable it (IA32_APIC_BASE
         * bit 11), and QEMU hands the PIC's output to the CPU directly.
         * (With LINT0 in virtual wire mode instead, each update of the
         * PIC's output, even for a masked IRQ, makes QEMU's APIC poll the
         * vCPU, which ends its HLT: the RTC below would do that at times
         * the host chooses, and the guest would run more instructions.)
         */
        movl $0x1b, %ecx
        rdmsr
        andw $~0x800, %ax
        wrmsr
        /* master PIC: ICW1-4, vectors 8-15, then only IRQ 0 unmasked */
        movb $0x11, %al
        outb %al, $0x20
        movb $0x08, %al
        outb %al, $0x21
        movb $0x04, %al
        outb %al, $0x21
        movb $0x01, %al
        outb %al, $0x21
        movb $0xfe, %al
        outb %al, $0x21

        /*
         * RTC periodic interrupt at 8192 Hz (rate 3), IRQ 8, which the
         * master PIC keeps masked (IRQ 2): the guest never sees it.  Run
         * with -rtc clock=rt, its timer is on the host's clock and wakes
         * QEMU's main loop every 122 us of host time, at moments that have
         * nothing to do with the guest's.
         */
        movb $0x0a, %al
        outb %al, $0x70
        movb $0x23, %al
        outb %al, $0x71
        movb $0x0b, %al
        outb %al, $0x70
        movb $0x42, %al                 /* PIE, 24 h */
        outb %al, $0x71

        movw $ITER, %cx
next:
        /* PIT channel 0, lobyte/hibyte, mode 0: IRQ 0 after PIT_COUNT */
        movb $0x30, %al
        outb %al, $0x43
        movb $(PIT_COUNT & 0xff), %al
        outb %al, $0x40
        movb $(PIT_COUNT >> 8), %al
        outb %al, $0x40
.if MODE == 1
        /* work that reads no clock: the slice HLT ends */
        movw $WORK, %si
1:      decw %si
        jnz 1b
        testw $1023, %cx
        jnz 2f
        call put_tsc
2:
.else
        /* pvpanic "panicked": the VM stops after this instruction */
        movb $1, %al
        movw $0x505, %dx
        outb %al, %dx
        call put_tsc
.endif
        /* wait for IRQ 0 */
3:      cli
        cmpb $0, FLAG
        jne 4f
        sti
        hlt
        jmp 3b
4:      movb $0, FLAG
        loop next

        cli
        call put_tsc
        movb $'e', %al
        outb %al, $0xe9
        movb $'n', %al
        outb %al, $0xe9
        movb $'d', %al
        outb %al, $0xe9
        movb $'\n', %al
        outb %al, $0xe9
        movb $0, %al
        outb %al, $0xf4
5:      hlt
        jmp 5b

irq0:
        pushw %ax
        xorw %ax, %ax
        pushw %ds
        movw %ax, %ds
        movb $1, FLAG
        popw %ds
        movb $0x20, %al                 /* EOI */
        outb %al, $0x20
        popw %ax
        iret

/* the TSC as 16 hex digits and a newline */
put_tsc:
        pushl %eax
        pushl %edx
        rdtsc
        xchgl %eax, %edx
        call put_hex
        movl %edx, %eax
        call put_hex
        movb $'\n', %al
        outb %al, $0xe9
        popl %edx
        popl %eax
        ret

/* %eax as 8 hex digits */
put_hex:
        pushw %cx
        pushl %ebx
        movl %eax, %ebx
        movw $8, %cx
1:      roll $4, %ebx
        movb %bl, %al
        andb $0x0f, %al
        addb $'0', %al
        cmpb $'9', %al
        jbe 2f
        addb $('a' - '9' - 1), %al
2:      outb %al, $0xe9
        loop 1b
        popl %ebx
        popw %cx
        ret

        /* the reset vector, 16 bytes from the top */
        .org 0xfff0, 0xff
        ljmp $0xf000, $_start
        .org 0x10000, 0xff

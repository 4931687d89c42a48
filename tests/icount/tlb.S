/*
 * A 64 KiB x86 firmware for tests/icount/test_icount.py, case "tlb": does
 * the size of QEMU's software TLB depend on the host?  No kernel, no disk.
 *
 * QEMU sizes each TLB from its use over a window of 100 ms of the host's
 * time (accel/tcg/cputlb.c): it shrinks a TLB that a whole window used
 * little.  What stays in the TLB is visible to the guest: x86 keeps
 * using a cached translation after its page-table entry changed until
 * the page is invalidated (INVLPG, a CR3 write), and sets a PTE's
 * accessed bit only when it walks the table.  So when the TLB shrinks
 * decides what the guest reads.
 *
 * The firmware enables paging (32-bit, 4 KiB pages) and grows the TLB
 * to 1,024 entries (250, then 500 pages touched between two CR3
 * writes).  Then, MAXIT times at most: reload CR3 (a flush, where QEMU
 * resizes), read page V (mapped to a page holding 1), point V's PTE at a
 * page holding 2 without invalidating it, read ten pages that share V's
 * TLB slot in a 64-entry TLB but not in a 1,024-entry one (ten: the
 * victim TLB holds eight), and read V again.  While the TLB is large the
 * second read still gets 1; once it has shrunk, 2.  The firmware prints
 * the iteration at which it first read 2 (8 hex digits; "none" if never)
 * and "end", then ends QEMU (isa-debug-exit).  If the TLB shrinks after
 * 100 ms of host time, that iteration depends on the host's speed; under
 * -icount it must not.
 *
 *   as --32 -o tlb.o tlb.S
 *   ld -m elf_i386 -Ttext=0 --oformat binary -o tlb.bin tlb.o
 */
        .equ ROM, 0xf0000               /* where this image runs below 1 MiB */
        .equ PD, 0x10000                /* page directory */
        .equ PT1, 0x11000               /* 0-4 MiB: identity */
        .equ PT2, 0x12000               /* 4-8 MiB: onto 2-6 MiB */
        .equ V, 0x400000                /* the page whose PTE changes */
        .equ P1, 0x700000               /* holds 1 */
        .equ P2, 0x701000               /* holds 2 */
        .equ STRIDE, 0x40000            /* 64 pages: V's slot in 64 entries */
        .equ MAXIT, 0x10000

        .code16
        .text
        .globl _start
_start:
        cli
        xorw %ax, %ax
        movw %ax, %ss
        movw $0x7000, %sp
        movw $(ROM >> 4), %ax
        movw %ax, %ds
        lgdtl gdt_desc
        movl %cr0, %eax
        orl $1, %eax
        movl %eax, %cr0
        ljmpl $0x08, $(ROM + pm)

        .code32
pm:
        movw $0x10, %ax
        movw %ax, %ds
        movw %ax, %es
        movw %ax, %ss
        movl $0x7000, %esp
        cld
        /* page directory: PT1 and PT2 */
        movl $PD, %edi
        xorl %eax, %eax
        movl $1024, %ecx
        rep stosl
        movl $(PT1 | 3), PD
        movl $(PT2 | 3), PD + 4
        movl $PT1, %edi
        movl $3, %eax
        movl $1024, %ecx
1:      stosl
        addl $0x1000, %eax
        loop 1b
        movl $PT2, %edi
        movl $(0x200000 | 3), %eax
        movl $1024, %ecx
2:      stosl
        addl $0x1000, %eax
        loop 2b
        movl $1, P1
        movl $2, P2
        movl $PD, %eax
        movl %eax, %cr3
        movl %cr0, %eax
        orl $0x80000000, %eax
        movl %eax, %cr0
        jmp 3f
3:
        /* grow the TLB: 256 -> 512 -> 1,024 entries */
        movl $250, %ebx
        call touch
        call flush
        movl $500, %ebx
        call touch
        call flush

        xorl %ebp, %ebp
next:
        movl $(P1 | 3), PT2             /* V -> P1 */
        call flush
        movl V, %eax                    /* V cached, onto P1 */
        movl $(P2 | 3), PT2             /* V -> P2, not invalidated */
        movl $(V + STRIDE), %esi
        movl $10, %ecx
4:      movl (%esi), %eax
        addl $STRIDE, %esi
        loop 4b
        movl V, %eax
        cmpl $2, %eax
        je found
        incl %ebp
        cmpl $MAXIT, %ebp
        jb next
        movl $0x656e6f6e, %eax          /* "none" */
        call put4
        jmp done
found:
        movl %ebp, %eax
        call put_hex
done:
        movb $'\n', %al
        outb %al, $0xe9
        movl $0x0a646e65, %eax          /* "end\n" */
        call put4
        movb $0, %al
        outb %al, $0xf4
5:      hlt
        jmp 5b

/* read %ebx pages from V on */
touch:
        movl $V, %esi
1:      movl (%esi), %eax
        addl $0x1000, %esi
        decl %ebx
        jnz 1b
        ret

/* a CR3 write: QEMU flushes the TLB, and may resize it */
flush:
        movl %cr3, %eax
        movl %eax, %cr3
        ret

/* the four bytes of %eax, lowest first */
put4:
        movl $4, %ecx
1:      outb %al, $0xe9
        shrl $8, %eax
        loop 1b
        ret

/* %eax as 8 hex digits */
put_hex:
        movl %eax, %ebx
        movl $8, %ecx
1:      roll $4, %ebx
        movb %bl, %al
        andb $0x0f, %al
        addb $'0', %al
        cmpb $'9', %al
        jbe 2f
        addb $('a' - '9' - 1), %al
2:      outb %al, $0xe9
        loop 1b
        ret

        .p2align 3
gdt:
        .quad 0
        .quad 0x00cf9a000000ffff        /* 0x08: code, flat, 32-bit */
        .quad 0x00cf92000000ffff        /* 0x10: data, flat */
gdt_desc:
        .word gdt_desc - gdt - 1
        .long ROM + gdt

        /* the reset vector, 16 bytes from the top */
        .code16
        .org 0xfff0, 0xff
        ljmp $(ROM >> 4), $_start
        .org 0x10000, 0xff

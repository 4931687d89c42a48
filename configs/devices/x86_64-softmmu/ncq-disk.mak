# Devices for the ncq-disk build: the q35 and pc boards, their AHCI
# controllers, serial ports for the guest console, and ncq-disk.
# pvpanic (ISA, port 0x505): the guest harness's snapshot point.  The
# guest's init writes to it once its disk is up; with -action panic=pause
# the vCPU stops at that very instruction, a deterministic place to save
# the VM and restore it for each workload (docs/guest-image.md).
CONFIG_Q35=y
CONFIG_I440FX=y
CONFIG_AHCI_ICH9=y
CONFIG_ISA_DEBUG=y
CONFIG_PVPANIC_ISA=y
CONFIG_NCQ_DISK=y

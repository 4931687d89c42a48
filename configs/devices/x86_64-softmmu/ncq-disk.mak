# Devices for the ncq-disk build: the q35 and pc boards, their AHCI
# controllers, serial ports for the guest console, and ncq-disk.
CONFIG_Q35=y
CONFIG_I440FX=y
CONFIG_AHCI_ICH9=y
CONFIG_ISA_DEBUG=y
CONFIG_NCQ_DISK=y

#include "trace/trace-hw_ide_ncq_disk.h"

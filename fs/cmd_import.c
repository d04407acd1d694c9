#include <stdio.h>
#include "cmd.h"
int cmd_import(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "passfs: not built yet\n"); return 1; }

// tailforge: parses the command line and hands it to the daemon library's command dispatcher.
#include "daemon/cli/cli.h"

int main(int argc, char** argv) { return tailforge::run_cli(argc, argv); }

/* placeholder: the CLI is being written */
#include "wavewarp.h"
int main(void) { return 0; }

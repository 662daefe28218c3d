/* Placeholder until the TUI lands. */
#include <stdio.h>
int main(void)
{
    fputs("jprof-top: not built yet\n", stderr);
    return 1;
}

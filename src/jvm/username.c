#include "jvm/username.h"

#include <pwd.h>
#include <stdio.h>

void jvm_user_name(uid_t uid, char *buf, size_t len)
{
    struct passwd pw, *res = NULL;
    char tmp[1024];
    if (getpwuid_r(uid, &pw, tmp, sizeof tmp, &res) == 0 && res)
        snprintf(buf, len, "%s", pw.pw_name);
    else
        snprintf(buf, len, "%lu", (unsigned long)uid);
}

/* username.h - the login name of a uid, for jvm_proc.user.
 *
 * Two implementations of the one function, chosen at link time:
 *   src/jvm/username.c        getpwuid_r (NSS: files, LDAP, sssd ...), in
 *                             libjpjvm.a, for jprof-top and jprof-agent;
 *   src/probe/probe_username.c reads /etc/passwd itself. jprof-probe is
 *                             statically linked and runs in containers whose
 *                             libc is not ours, where an NSS lookup would
 *                             dlopen modules of another glibc (or none). Its
 *                             object file comes before libjpjvm.a on the link
 *                             line, so the archive's username.o is not used.
 * Never fails: writes the number when no name is found. Thread-safe. */
#ifndef JP_JVM_USERNAME_H
#define JP_JVM_USERNAME_H

#include <stddef.h>
#include <sys/types.h>

void jvm_user_name(uid_t uid, char *buf, size_t len);

#endif

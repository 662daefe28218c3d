/* auth.h - bearer tokens of jprof-server: roles and namespace scopes.
 *
 * Token file: one token per line, `TOKEN ROLE SCOPE`, ROLE one of ingest,
 * read, admin; SCOPE `*` or a comma-separated list of namespaces; `#` starts
 * a comment; blank lines are ignored. admin may do everything a read or an
 * ingest token may. Tokens are compared in constant time and never printed
 * (errors name the line number only).
 *
 * Ownership: auth_load() returns a heap table freed by auth_free(). Lookups
 * are read-only and thread-safe. */
#ifndef JP_SERVER_AUTH_H
#define JP_SERVER_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

typedef enum auth_role { AUTH_INGEST = 1, AUTH_READ = 2, AUTH_ADMIN = 4 } auth_role;

typedef struct auth_token auth_token;
typedef struct auth_table auth_table;

#define AUTH_TOKEN_MAX 512
#define AUTH_TOKENS_MAX 10000

jp_err auth_load(const char *path, auth_table **out, jp_error *err);
/* Parses the file's text (for tests); `name` labels errors. */
jp_err auth_parse(const char *text, size_t len, const char *name, auth_table **out, jp_error *err);
void auth_free(auth_table *t);
size_t auth_count(const auth_table *t);

/* The token matching `presented` (len bytes), or NULL. Every stored token is
 * compared in full, so the time taken does not tell how much matched. */
const auth_token *auth_lookup(const auth_table *t, const char *presented, size_t len);

/* True when the token may act in `role` (admin may act in every role). */
bool auth_has_role(const auth_token *tok, auth_role role);
/* True when the token's scope covers namespace ns ("*" covers all). */
bool auth_in_scope(const auth_token *tok, const char *ns);
/* True when the scope is `*`. */
bool auth_all_namespaces(const auth_token *tok);
/* "ingest", "read", "admin". */
const char *auth_role_name(const auth_token *tok);

#endif

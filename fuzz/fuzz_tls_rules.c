/* libFuzzer: TLS verify-peers rules. Any text either fails to parse with a reason, or parses
 * and can be matched against a real certificate chain without crashing. */
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tls_verify.h"
#include "pki.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static STACK_OF(X509) *g_chain;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char dir[] = "/tmp/cfdb-fuzz-tls-XXXXXX";
    if (!mkdtemp(dir) || cfdb_pki_create(dir))
        abort();
    g_chain = sk_X509_new_null();
    const char *files[] = { "server.pem", "ca.pem" };
    for (int i = 0; i < 2; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        FILE *f = fopen(path, "r");
        if (!f)
            abort();
        sk_X509_push(g_chain, PEM_read_X509(f, NULL, NULL, NULL));
        fclose(f);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0; /* rules are C strings: an embedded NUL ends them */
    char err[256] = "";
    cfdb_tls_rules *r = cfdb_tls_rules_parse(text, err, sizeof err);
    if (!r) {
        if (!err[0])
            abort(); /* a refusal always says why */
    } else {
        const char *why = NULL;
        if (!cfdb_tls_rules_match(r, g_chain, &why) && !why)
            abort();
        (void)cfdb_tls_rules_accept_invalid(r);
        cfdb_tls_rules_free(r);
    }
    free(text);
    return 0;
}

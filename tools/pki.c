/* A throwaway certificate authority for trying TLS with the dev server and for the tests:
 * P-256 keys, certificates valid for 100 years (one already expired, for tests), written as PEM
 * files into a directory. Never use these for anything real. */
#include "pki.h"

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <string.h>

#define HUNDRED_YEARS (100L * 365 * 24 * 3600)

typedef struct issued {
    X509 *cert;
    EVP_PKEY *key;
} issued;

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX v3;
    X509V3_set_ctx(&v3, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    if (!ext)
        return -1;
    int rc = X509_add_ext(cert, ext, -1) == 1 ? 0 : -1;
    X509_EXTENSION_free(ext);
    return rc;
}

/* subject: "CN=x,O=y,OU=z" (no escaping needed for our names). */
static int set_subject(X509 *cert, const char *subject)
{
    X509_NAME *name = X509_get_subject_name(cert);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", subject);
    for (char *save = NULL, *part = strtok_r(buf, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(part, '=');
        if (!eq)
            return -1;
        *eq = 0;
        if (X509_NAME_add_entry_by_txt(name, part, MBSTRING_UTF8, (unsigned char *)eq + 1, -1, -1, 0) != 1)
            return -1;
    }
    return 0;
}

/* Issues a certificate for subject, signed by `by` (NULL: self-signed). */
static int issue(issued *out, const char *subject, const issued *by, bool ca, const char *san, long not_before,
                 long not_after, long serial)
{
    out->key = EVP_EC_gen("P-256");
    out->cert = X509_new();
    if (!out->key || !out->cert)
        return -1;
    X509 *issuer_cert = by ? by->cert : out->cert;
    EVP_PKEY *issuer_key = by ? by->key : out->key;
    if (X509_set_version(out->cert, 2) != 1 || ASN1_INTEGER_set(X509_get_serialNumber(out->cert), serial) != 1 ||
        !X509_gmtime_adj(X509_getm_notBefore(out->cert), not_before) ||
        !X509_gmtime_adj(X509_getm_notAfter(out->cert), not_after) || X509_set_pubkey(out->cert, out->key) != 1 ||
        set_subject(out->cert, subject))
        return -1;
    if (X509_set_issuer_name(out->cert, X509_get_subject_name(issuer_cert)) != 1)
        return -1;
    if (add_ext(out->cert, issuer_cert, NID_basic_constraints, ca ? "critical,CA:TRUE" : "CA:FALSE") ||
        add_ext(out->cert, issuer_cert, NID_key_usage,
                ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature,keyEncipherment") ||
        add_ext(out->cert, issuer_cert, NID_subject_key_identifier, "hash") ||
        add_ext(out->cert, issuer_cert, NID_authority_key_identifier, "keyid:always"))
        return -1;
    if (!ca && add_ext(out->cert, issuer_cert, NID_ext_key_usage, "serverAuth,clientAuth"))
        return -1;
    if (san && add_ext(out->cert, issuer_cert, NID_subject_alt_name, san))
        return -1;
    return X509_sign(out->cert, issuer_key, EVP_sha256()) > 0 ? 0 : -1;
}

static void issued_free(issued *i)
{
    X509_free(i->cert);
    EVP_PKEY_free(i->key);
}

static int write_pem(const char *dir, const char *name, X509 *const *certs, int ncerts, EVP_PKEY *key,
                     const char *password)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int ok = 1;
    for (int i = 0; i < ncerts && ok; i++)
        ok = PEM_write_X509(f, certs[i]);
    if (key && ok)
        ok = password ? PEM_write_PKCS8PrivateKey(f, key, EVP_aes_256_cbc(), NULL, 0, NULL, (void *)password)
                      : PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
    return fclose(f) == 0 && ok ? 0 : -1;
}

int cfdb_pki_create(const char *dir)
{
    issued ca = { 0 }, inter = { 0 }, server = { 0 }, client = { 0 }, other_ca = { 0 }, other = { 0 },
           expired = { 0 }, chained = { 0 }, dup = { 0 };
    long y = HUNDRED_YEARS;
    int rc = -1;
    if (issue(&ca, "CN=cfdb test CA,O=cfdb", NULL, true, NULL, -3600, y, 1) ||
        issue(&inter, "CN=cfdb test intermediate,O=cfdb", &ca, true, NULL, -3600, y, 2) ||
        issue(&server, "CN=cfdb-server,O=cfdb,OU=server", &ca, false,
              "DNS:localhost,IP:127.0.0.1,URI:spiffe://cfdb/server,email:server@cfdb.test", -3600, y, 3) ||
        issue(&client, "CN=cfdb-client,O=cfdb,OU=client", &ca, false, "DNS:client.cfdb.test,email:client@cfdb.test",
              -3600, y, 4) ||
        issue(&other_ca, "CN=other CA,O=elsewhere", NULL, true, NULL, -3600, y, 5) ||
        issue(&other, "CN=cfdb-client,O=cfdb,OU=client", &other_ca, false, NULL, -3600, y, 6) ||
        issue(&expired, "CN=cfdb-expired,O=cfdb", &ca, false, NULL, -7200, -3600, 7) ||
        issue(&chained, "CN=cfdb-chained,O=cfdb,OU=server", &inter, false, NULL, -3600, y, 8) ||
        issue(&dup, "CN=cfdb-dup,O=cfdb,OU=a,OU=b", &ca, false, NULL, -3600, y, 9))
        goto done;
    X509 *chain[2] = { chained.cert, inter.cert };
    if (write_pem(dir, "ca.pem", &ca.cert, 1, NULL, NULL) ||
        write_pem(dir, "server.pem", &server.cert, 1, NULL, NULL) ||
        write_pem(dir, "server.key", NULL, 0, server.key, NULL) ||
        write_pem(dir, "client.pem", &client.cert, 1, NULL, NULL) ||
        write_pem(dir, "client.key", NULL, 0, client.key, NULL) ||
        write_pem(dir, "client-encrypted.key", NULL, 0, client.key, "secret") ||
        write_pem(dir, "other-ca.pem", &other_ca.cert, 1, NULL, NULL) ||
        write_pem(dir, "other.pem", &other.cert, 1, NULL, NULL) ||
        write_pem(dir, "other.key", NULL, 0, other.key, NULL) ||
        write_pem(dir, "expired.pem", &expired.cert, 1, NULL, NULL) ||
        write_pem(dir, "expired.key", NULL, 0, expired.key, NULL) ||
        write_pem(dir, "chained.pem", chain, 2, NULL, NULL) ||
        write_pem(dir, "chained.key", NULL, 0, chained.key, NULL) ||
        write_pem(dir, "dup.pem", &dup.cert, 1, NULL, NULL) || write_pem(dir, "dup.key", NULL, 0, dup.key, NULL))
        goto done;
    rc = 0;
done:
    issued_free(&ca);
    issued_free(&inter);
    issued_free(&server);
    issued_free(&client);
    issued_free(&other_ca);
    issued_free(&other);
    issued_free(&expired);
    issued_free(&chained);
    issued_free(&dup);
    return rc;
}

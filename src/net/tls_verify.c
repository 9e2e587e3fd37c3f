/* FoundationDB's verify-peers rules: parsing (flow/TLSConfig's grammar, RFC 4514 value
 * escapes) and matching against a verified certificate chain. Decisions follow libfdb_c 7.3
 * exactly, including its subjectAltName quirks, so a rule accepts and refuses the same peers. */
#include "tls_verify.h"

#include <openssl/asn1.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum match_type { MATCH_EXACT, MATCH_PREFIX, MATCH_SUFFIX };
enum scope { SCOPE_SUBJECT, SCOPE_ISSUER, SCOPE_ROOT };

typedef struct criterion {
    enum scope scope;
    int nid;
    bool in_extension; /* subjectAltName lives in an extension, the rest in the name */
    enum match_type match;
    char *value;
    size_t value_len;
} criterion;

typedef struct rule {
    bool verify_cert; /* Check.Valid */
    criterion *crit;
    size_t ncrit;
} rule;

struct cfdb_tls_rules {
    rule *rules;
    size_t nrules;
};

static void set_err(char *err, size_t cap, const char *what, const char *text)
{
    if (err && cap)
        snprintf(err, cap, "bad TLS verify-peers rule \"%s\": %s", text, what);
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Unescapes an RFC 4514 value starting at in[start]; *end is where it stopped (a ',' that
 * ends the term, the end of the text, or a character that should have been escaped).
 * Trailing unescaped spaces are dropped. Returns a malloc'd buffer (length in *out_len). */
static char *unescape_4514(const char *in, size_t len, size_t start, size_t *end, size_t *out_len)
{
    char *out = malloc(len - start + 1);
    if (!out)
        return NULL;
    size_t o = 0, spaces = 0, p = start;
    *end = start;
    if (start < len && (in[start] == '#' || in[start] == ' ')) {
        *out_len = 0;
        return out;
    }
    while (p < len) {
        char c = in[p];
        if (c == '\\') {
            if (p + 1 == len)
                break;
            if (strchr(" \"#+,;<=>|\\", in[p + 1])) {
                out[o++] = in[p + 1];
                p += 2;
                spaces = 0;
                continue;
            }
            if (p + 2 == len)
                break;
            int hi = hex_value(in[p + 1]), lo = hex_value(in[p + 2]);
            if (hi < 0 || lo < 0)
                break;
            out[o++] = (char)(hi * 16 + lo);
            p += 3;
            spaces = 0;
            continue;
        }
        if (c == '"' || c == '+' || c == ',' || c == ';' || c == '<' || c == '>' || c == 0)
            break;
        out[o++] = c;
        spaces = c == ' ' ? spaces + 1 : 0;
        p++;
    }
    *end = p - spaces;
    *out_len = o - spaces;
    return out;
}

static int field_nid(const char *name, size_t n)
{
    static const char *const allowed[] = { "C", "CN", "L", "ST", "O", "OU", "UID", "DC", "subjectAltName" };
    for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++)
        if (strlen(allowed[i]) == n && memcmp(allowed[i], name, n) == 0)
            return OBJ_sn2nid(allowed[i]);
    return NID_undef;
}

static bool scope_named(const char *s, size_t n, enum scope *out)
{
#define IS(lit) (n == sizeof(lit) - 1 && memcmp(s, lit, n) == 0)
    if (IS("S") || IS("Subject"))
        *out = SCOPE_SUBJECT;
    else if (IS("I") || IS("Issuer"))
        *out = SCOPE_ISSUER;
    else if (IS("R") || IS("Root"))
        *out = SCOPE_ROOT;
    else
        return false;
    return true;
#undef IS
}

static void rule_free(rule *r)
{
    for (size_t i = 0; i < r->ncrit; i++)
        free(r->crit[i].value);
    free(r->crit);
}

static const char *parse_rule(const char *in, size_t len, rule *r)
{
    r->verify_cert = true;
    size_t s = 0;
    while (s < len) {
        const char *eqp = memchr(in + s, '=', len - s);
        if (!eqp)
            return "a term without '='";
        size_t eq = (size_t)(eqp - in);
        enum match_type mt = MATCH_EXACT;
        if (eq > s && in[eq - 1] == '>')
            mt = MATCH_PREFIX;
        else if (eq > s && in[eq - 1] == '<')
            mt = MATCH_SUFFIX;
        const char *term = in + s;
        size_t term_len = eq - s - (mt == MATCH_EXACT ? 0 : 1);

        if (term_len >= 6 && memcmp(term, "Check.", 6) == 0) {
            if (eq + 2 > len || (eq + 2 != len && in[eq + 2] != ','))
                return "a Check takes one digit";
            if (mt != MATCH_EXACT)
                return "a Check cannot be prefix or suffix matched";
            bool value;
            if (in[eq + 1] == '0')
                value = false;
            else if (in[eq + 1] == '1')
                value = true;
            else
                return "a Check is 0 or 1";
            if (term_len == 11 && memcmp(term, "Check.Valid", 11) == 0)
                r->verify_cert = value;
            else if (!(term_len == 15 && memcmp(term, "Check.Unexpired", 15) == 0))
                return "unknown Check";
            s = eq + 3;
            continue;
        }

        criterion c = { .scope = SCOPE_SUBJECT, .match = mt };
        const char *dot = memchr(term, '.', term_len);
        if (dot) {
            if (!scope_named(term, (size_t)(dot - term), &c.scope))
                return "unknown scope (S, I, R)";
            term_len -= (size_t)(dot - term) + 1;
            term = dot + 1;
        }
        size_t remain;
        c.value = unescape_4514(in, len, eq + 1, &remain, &c.value_len);
        if (!c.value)
            return "out of memory";
        if (remain == eq + 1) {
            free(c.value);
            return "empty value";
        }
        c.nid = field_nid(term, term_len);
        if (c.nid == NID_undef) {
            free(c.value);
            return "unknown field (C, CN, L, ST, O, OU, UID, DC, subjectAltName)";
        }
        c.in_extension = c.nid == NID_subject_alt_name;
        if (remain != len && in[remain] != ',') {
            free(c.value);
            return "unescaped special character in a value";
        }
        criterion *nc = realloc(r->crit, (r->ncrit + 1) * sizeof *nc);
        if (!nc) {
            free(c.value);
            return "out of memory";
        }
        r->crit = nc;
        r->crit[r->ncrit++] = c;
        s = remain + 1;
    }
    return NULL;
}

cfdb_tls_rules *cfdb_tls_rules_parse(const char *text, char *err, size_t err_cap)
{
    cfdb_tls_rules *rs = calloc(1, sizeof *rs);
    if (!rs)
        return NULL;
    size_t len = strlen(text);
    if (len == 0)
        return rs;
    size_t start = 0;
    for (size_t p = 0; p <= len; p++) {
        /* alternatives split on '|' unless escaped */
        if (p < len && (text[p] != '|' || (p > 0 && text[p - 1] == '\\')))
            continue;
        rule *nr = realloc(rs->rules, (rs->nrules + 1) * sizeof *nr);
        if (!nr) {
            cfdb_tls_rules_free(rs);
            return NULL;
        }
        rs->rules = nr;
        rule *r = &rs->rules[rs->nrules++];
        memset(r, 0, sizeof *r);
        const char *why = parse_rule(text + start, p - start, r);
        if (why) {
            set_err(err, err_cap, why, text);
            cfdb_tls_rules_free(rs);
            return NULL;
        }
        start = p + 1;
    }
    return rs;
}

void cfdb_tls_rules_free(cfdb_tls_rules *rs)
{
    if (!rs)
        return;
    for (size_t i = 0; i < rs->nrules; i++)
        rule_free(&rs->rules[i]);
    free(rs->rules);
    free(rs);
}

bool cfdb_tls_rules_accept_invalid(const cfdb_tls_rules *rs)
{
    for (size_t i = 0; i < rs->nrules; i++)
        if (!rs->rules[i].verify_cert)
            return true;
    return false;
}

/* Compares as UTF-8, the criterion read as IA5 text, as libfdb_c does. */
static bool match_entry(const criterion *c, const char *value, size_t value_len, const ASN1_STRING *entry)
{
    bool ok = false;
    unsigned char *want = NULL, *have = NULL;
    ASN1_STRING *w = ASN1_IA5STRING_new();
    if (!w || ASN1_STRING_set(w, value, (int)value_len) != 1)
        goto done;
    int wl = ASN1_STRING_to_UTF8(&want, w);
    int hl = ASN1_STRING_to_UTF8(&have, entry);
    if (wl < 1 || hl < 1)
        goto done;
    if (c->match == MATCH_EXACT)
        ok = wl == hl && memcmp(want, have, (size_t)wl) == 0;
    else if (c->match == MATCH_PREFIX)
        ok = wl <= hl && memcmp(want, have, (size_t)wl) == 0;
    else
        ok = wl <= hl && memcmp(want, have + (hl - wl), (size_t)wl) == 0;
done:
    ASN1_STRING_free(w);
    OPENSSL_free(want);
    OPENSSL_free(have);
    return ok;
}

static bool match_name(const criterion *c, const X509_NAME *name)
{
    int idx = X509_NAME_get_index_by_NID(name, c->nid, -1);
    if (idx < 0 || X509_NAME_get_index_by_NID(name, c->nid, idx) != -1)
        return false; /* absent, or ambiguous */
    const X509_NAME_ENTRY *e = X509_NAME_get_entry(name, idx);
    return e && match_entry(c, c->value, c->value_len, X509_NAME_ENTRY_get_data(e));
}

/* "DNS:x", "EMAIL:x", "URI:x", "IP:x" against the certificate's alternative names. libfdb_c
 * lets a DNS rule also match an email entry and an IP rule a URI entry (its type switch falls
 * through), and never matches IP entries (raw address bytes are not text); kept identical. */
static bool match_alt_name(const criterion *c, X509 *cert)
{
    const char *colon = memchr(c->value, ':', c->value_len);
    if (!colon)
        return false;
    size_t kind_len = (size_t)(colon - c->value);
    const char *want = colon + 1;
    size_t want_len = c->value_len - kind_len - 1;
#define KIND(lit) (kind_len == sizeof(lit) - 1 && memcmp(c->value, lit, kind_len) == 0)
    bool email = KIND("EMAIL"), dns = KIND("DNS"), uri = KIND("URI"), ip = KIND("IP");
#undef KIND
    GENERAL_NAMES *names = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
    if (!names)
        return false;
    bool ok = false;
    for (int i = 0; i < sk_GENERAL_NAME_num(names) && !ok; i++) {
        const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
        switch (g->type) {
        case GEN_EMAIL:
        case GEN_DNS:
            if ((email && g->type == GEN_EMAIL) || dns)
                ok = match_entry(c, want, want_len, g->d.ia5);
            break;
        case GEN_URI:
            if (uri || ip)
                ok = match_entry(c, want, want_len, g->d.ia5);
            break;
        default:
            break;
        }
    }
    GENERAL_NAMES_free(names);
    return ok;
}

static const char *check_rule(const rule *r, STACK_OF(X509) *chain)
{
    X509 *leaf = sk_X509_value(chain, 0);
    X509 *root = sk_X509_value(chain, sk_X509_num(chain) - 1);
    if (!leaf || !root)
        return "empty certificate chain";
    for (size_t i = 0; i < r->ncrit; i++) {
        const criterion *c = &r->crit[i];
        X509 *cert = c->scope == SCOPE_ROOT ? root : leaf;
        const X509_NAME *name = c->scope == SCOPE_ISSUER ? X509_get_issuer_name(cert) : X509_get_subject_name(cert);
        bool ok = c->in_extension ? match_alt_name(c, cert) : match_name(c, name);
        if (!ok)
            return c->scope == SCOPE_SUBJECT  ? "certificate subject does not match the verify-peers rules"
                   : c->scope == SCOPE_ISSUER ? "certificate issuer does not match the verify-peers rules"
                                              : "root certificate does not match the verify-peers rules";
    }
    return NULL;
}

bool cfdb_tls_rules_match(const cfdb_tls_rules *rs, const void *chain_v, const char **reason)
{
    STACK_OF(X509) *chain = (STACK_OF(X509) *)chain_v;
    if (rs->nrules == 0)
        return true;
    const char *why = "no verify-peers rule matched";
    for (size_t i = 0; i < rs->nrules; i++) {
        const char *r = check_rule(&rs->rules[i], chain);
        if (!r)
            return true;
        why = r;
    }
    if (reason)
        *reason = why;
    return false;
}

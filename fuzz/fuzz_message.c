/* fuzz_message: decode / encode / decode round trip of one message type.
 *
 * Input: one byte that picks cfdb_all_messages[byte % count], then a bare ObjectSerializer
 * message. When fb_decode accepts it, the value is re-encoded with fb_encode and decoded
 * again: the second decode must succeed and print exactly like the first. Any difference
 * calls abort() after printing both forms: that is a codec bug, not a harness problem. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfdb/arena.h"
#include "fb.h"
#include "messages.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Prints the decoded value (or reply error) into a malloc'd string. */
static char *render(const fb_message *m, const void *item, cfdb_reply_error err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        abort();
    fb_printer pr = { f, 0, true };
    fprintf(f, "%s error=%u\n", m->name, err);
    if (err == 0)
        fb_print_value(&pr, m->item, item);
    if (fclose(f) != 0)
        abort();
    return text;
}

static void fail(const char *what, const fb_message *m, const char *first, const char *second)
{
    fprintf(stderr, "fuzz_message: %s (%s)\n--- first decode ---\n%s\n--- second decode ---\n%s\n", what,
            m->name, first ? first : "(none)", second ? second : "(none)");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || cfdb_all_messages_count == 0)
        return 0;
    const fb_message *m = cfdb_all_messages[data[0] % cfdb_all_messages_count];
    size_t len = size - 1;

    /* An exact-size copy, so ASan catches reads past the message end. */
    uint8_t *in = malloc(len ? len : 1);
    if (!in)
        return 0;
    if (len)
        memcpy(in, data + 1, len);

    size_t csize = m->item->csize ? m->item->csize : 1;
    void *item1 = calloc(1, csize), *item2 = calloc(1, csize);
    cfdb_arena a1, a2;
    cfdb_arena_init(&a1);
    cfdb_arena_init(&a2);
    fb_writer w;
    fb_writer_init(&w, 0);
    char *text1 = NULL, *text2 = NULL;
    uint8_t *out = NULL;
    if (!item1 || !item2)
        goto done;

    cfdb_reply_error err1 = 0, err2 = 0;
    if (fb_decode(m, in, len, item1, &err1, &a1) != 0)
        goto done; /* rejected input: fine, as long as nothing crashed */
    text1 = render(m, item1, err1);

    int rc = fb_encode(&w, m, err1 ? NULL : item1, err1);
    if (rc != 0) {
        char why[96];
        snprintf(why, sizeof why, "fb_encode failed with %d on a decoded value", rc);
        fail(why, m, text1, NULL);
    }
    size_t out_len = fb_writer_message_len(&w);
    out = malloc(out_len ? out_len : 1);
    if (!out)
        goto done;
    memcpy(out, fb_writer_message(&w), out_len);

    rc = fb_decode(m, out, out_len, item2, &err2, &a2);
    if (rc != 0) {
        char why[96];
        snprintf(why, sizeof why, "re-encoded message does not decode (error %d)", rc);
        fail(why, m, text1, NULL);
    }
    text2 = render(m, item2, err2);
    if (strcmp(text1, text2) != 0)
        fail("decode(encode(decode(x))) prints differently from decode(x)", m, text1, text2);

done:
    free(text1);
    free(text2);
    free(out);
    fb_writer_free(&w);
    cfdb_arena_free(&a1);
    cfdb_arena_free(&a2);
    free(item1);
    free(item2);
    free(in);
    return 0;
}

/* Test support: decoded values as text, so two decodes can be compared field by field. */
#ifndef CFDB_TEST_PRINT_UTIL_H
#define CFDB_TEST_PRINT_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include "fb.h"

/* Returns a malloc'd string with the printed message. */
static inline char *print_to_string(const fb_message *m, const void *item, cfdb_reply_error err)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    fb_printer pr = { f, 0, true };
    fb_print_message(&pr, m, item, err);
    fclose(f);
    return s;
}

#endif

#include "uid.h"

#include <stdio.h>
#include <string.h>

#include "wire_errors.h"

char *cfdb_uid_format(cfdb_uid u, char buf[33])
{
    snprintf(buf, 33, "%016llx%016llx", (unsigned long long)u.first, (unsigned long long)u.second);
    return buf;
}

/* The digit's value, or 16 when c is not a hex digit. */
static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return 16;
}

int cfdb_uid_parse(const char *s, cfdb_uid *out)
{
    if (strlen(s) != 32)
        return CFDB_WIRE_SERIALIZATION_FAILED;
    uint64_t parts[2] = { 0, 0 };
    for (int i = 0; i < 32; i++) {
        int v = hexval(s[i]);
        if (v > 15)
            return CFDB_WIRE_SERIALIZATION_FAILED;
        parts[i / 16] = parts[i / 16] << 4 | (uint64_t)v;
    }
    out->first = parts[0];
    out->second = parts[1];
    return 0;
}

void cfdb_uid_store(uint8_t out[16], cfdb_uid u)
{
    memcpy(out, &u.first, 8);
    memcpy(out + 8, &u.second, 8);
}

cfdb_uid cfdb_uid_load(const uint8_t in[16])
{
    cfdb_uid u;
    memcpy(&u.first, in, 8);
    memcpy(&u.second, in + 8, 8);
    return u;
}

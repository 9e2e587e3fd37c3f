/* cfdb-certs DIR: writes a throwaway CA and certificates for trying TLS with cfdb-server. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "pki.h"

int main(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: cfdb-certs DIR\n"
                        "Writes a test CA (ca.pem), server.pem/.key and client.pem/.key (and a few\n"
                        "certificates for testing refusals) into DIR. For trials only.\n");
        return 2;
    }
    if (mkdir(argv[1], 0700) && errno != EEXIST) {
        fprintf(stderr, "cfdb-certs: cannot create %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    if (cfdb_pki_create(argv[1])) {
        fprintf(stderr, "cfdb-certs: cannot write the certificates into %s\n", argv[1]);
        return 1;
    }
    printf("%s/ca.pem, server.pem, server.key, client.pem, client.key written\n", argv[1]);
    return 0;
}

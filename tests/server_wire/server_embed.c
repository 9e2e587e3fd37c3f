/* The in-process server fixture (server_embed.h). */
#include <stdio.h>
#include <string.h>

#include "server_embed.h"

int se_start(se_fx *f, const cfdb_server_config *cfg)
{
    memset(f, 0, sizeof *f);
    cfdb_server_config c = *cfg;
    c.port = 0;
    f->loop = cfdb_loop_create();
    if (!f->loop)
        return -1;
    f->srv = cfdb_server_create(f->loop, &c);
    if (!f->srv) {
        cfdb_loop_destroy(f->loop);
        f->loop = NULL;
        return -1;
    }
    cfdb_arena_init(&f->a);
    const char *cs = cfdb_server_connection_string(f->srv);
    const char *at = strchr(cs, '@');
    snprintf(f->key, sizeof f->key, "%.*s", at ? (int)(at - cs) : 0, cs);
    if (wc_connect(&f->w, f->loop, cfdb_server_port(f->srv)) ||
        wc_open_database(&f->w, f->key, &f->info, &f->a)) {
        se_stop(f);
        return -1;
    }
    return 0;
}

void se_stop(se_fx *f)
{
    if (!f->loop)
        return;
    wc_close(&f->w);
    cfdb_server_destroy(f->srv);
    cfdb_loop_run_once(f->loop, 0);
    cfdb_loop_destroy(f->loop);
    cfdb_arena_free(&f->a);
    memset(f, 0, sizeof *f);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* libedit-backed line editing, history and completion (see lineedit.h). Completion
 * candidates follow fdbcli's fdbcliCompCmd (fdbcli/fdbcli.actor.cpp, 7.3.77): the tokens
 * before the word decide what is offered. */
#include "lineedit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <editline/readline.h>

#include "lexer.h"
#include "options.h"
#include "shell.h"

static char *g_history;
static char *g_last; /* the last line added: a repeat is not added again (linenoise's rule) */

static void offer(const char *cand, const char *word, void (*emit)(const char *, void *), void *arg)
{
    if (strncmp(cand, word, strlen(word)) == 0)
        emit(cand, arg);
}

void shell_complete(const char *line, int start, const char *word, void (*emit)(const char *, void *), void *arg)
{
    shell_parsed p;
    if (shell_lexer_parse(line, (size_t)start, &p))
        return;
    if (p.malformed || p.partial) {
        shell_lexer_free(&p);
        return;
    }
    const shell_command *c = &p.commands[p.count - 1];
    size_t count = c->count;
    static const char *on_off[] = {"on", "off", NULL};
    static const char *status_kinds[] = {"minimal", "details", "json", NULL};
    const char **list = NULL;
    if (count == 0 || (count == 1 && shell_token_is(c->tokens[0], "help"))) {
        for (size_t i = 0; shell_command_name(i); i++)
            offer(shell_command_name(i), word, emit, arg);
        if (count == 1) {
            offer("escaping", word, emit, arg);
            offer("options", word, emit, arg);
        }
    } else if (shell_token_is(c->tokens[0], "option") && count == 2) {
        for (size_t i = 0; i < shell_options_count; i++)
            if (shell_options[i].documented)
                offer(shell_options[i].name, word, emit, arg);
    } else if ((shell_token_is(c->tokens[0], "option") || shell_token_is(c->tokens[0], "writemode")) && count == 1) {
        list = on_off;
    } else if (shell_token_is(c->tokens[0], "status") && count == 1) {
        list = status_kinds;
    }
    for (; list && *list; list++)
        offer(*list, word, emit, arg);
    shell_lexer_free(&p);
}

/* libedit glue: collect the candidates, hand them out one by one. */
static char **g_cands;
static size_t g_ncands, g_next;

static void collect(const char *cand, void *arg)
{
    (void)arg;
    char **n = realloc(g_cands, (g_ncands + 1) * sizeof *n);
    if (!n)
        return;
    g_cands = n;
    g_cands[g_ncands] = strdup(cand);
    if (g_cands[g_ncands])
        g_ncands++;
}

static char *generator(const char *text, int state)
{
    (void)text;
    if (state == 0)
        g_next = 0;
    return g_next < g_ncands ? strdup(g_cands[g_next++]) : NULL;
}

static char **complete(const char *text, int start, int end)
{
    (void)end;
    for (size_t i = 0; i < g_ncands; i++)
        free(g_cands[i]);
    g_ncands = 0;
    shell_complete(rl_line_buffer, start, text, collect, NULL);
    rl_attempted_completion_over = 1; /* never fall back to file names */
    return g_ncands ? rl_completion_matches(text, generator) : NULL;
}

void shell_lineedit_init(const char *history_file)
{
    rl_readline_name = "cfdb";
    rl_attempted_completion_function = complete;
    rl_basic_word_break_characters = " \t\n;";
    using_history();
    stifle_history(1000);
    if (history_file) {
        g_history = strdup(history_file);
        read_history(history_file);
    }
}

char *shell_lineedit_read(const char *prompt) { return readline(prompt); }

void shell_lineedit_add_history(const char *line)
{
    if (strstr(line, "writemode") || strstr(line, "expensive_data_check") || strstr(line, "unlock") ||
        strstr(line, "blobrange") || (g_last && strcmp(g_last, line) == 0))
        return;
    add_history(line);
    free(g_last);
    g_last = strdup(line);
}

void shell_lineedit_close(void)
{
    if (g_history) {
        write_history(g_history);
        free(g_history);
        g_history = NULL;
    }
    free(g_last);
    g_last = NULL;
    for (size_t i = 0; i < g_ncands; i++)
        free(g_cands[i]);
    free(g_cands);
    g_cands = NULL;
    g_ncands = 0;
}

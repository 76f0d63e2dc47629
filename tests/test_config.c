/* config: defaults, ZPL files, environment and flags, in that precedence; the
 * errors a user sees; --print-config; and the sample configs in deploy/config/
 * as the three farm programs read them. */
#include <criterion/criterion.h>
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker.h"
#include "collector.h"
#include "config.h"
#include "worker.h"

/* A table with every type, as a program declares one. */
static const config_key_t s_keys[] = {
    {.name = "endpoint", .type = CONFIG_STRING, .fallback = "tcp://127.0.0.1:5556", .arg = "ENDPOINT",
     .help = "where to connect"},
    {.name = "worker-id", .type = CONFIG_STRING, .arg = "ID", .help = "stable id (default: made up)"},
    {.name = "slots", .type = CONFIG_INT, .fallback = "1", .arg = "N", .help = "jobs at once", .min = 1, .max = 64},
    {.name = "ratio", .type = CONFIG_DOUBLE, .fallback = "0.5", .arg = "X", .help = "a share", .dmin = 0, .dmax = 1},
    {.name = "verbose", .type = CONFIG_BOOL, .fallback = "false", .help = "say more"},
    {.name = "log-level", .type = CONFIG_STRING, .fallback = "info", .arg = "LEVEL", .help = "threshold",
     .choices = "debug|info|warn"},
    {.name = "python", .type = CONFIG_STRING, .arg = "PATH", .help = "interpreter",
     .env_alias = "PFTEST_OLD_PYTHON"},
};
#define KEY_COUNT (sizeof s_keys / sizeof s_keys[0])

static const config_action_t s_actions[] = {
    {.name = "print-plan", .arg = "PLAN", .help = "print a plan and exit"},
};

static char s_path[256];
/* Every file a test wrote, removed when it ends (a test may write several). */
static char s_written[64][256];
static size_t s_written_count;

/* Writes `text` to a fresh temporary file (in $TMPDIR, else /tmp); its path
 * is s_path, and the test's teardown removes it. */
static const char *s_write_cfg(const char *text)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(s_path, sizeof s_path, "%s/pf_test_config_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    cr_assert_lt(s_written_count, sizeof s_written / sizeof s_written[0]);
    int fd = mkstemp(s_path);
    cr_assert_geq(fd, 0);
    memcpy(s_written[s_written_count++], s_path, sizeof s_path);
    size_t len = strlen(text);
    cr_assert_eq(write(fd, text, len), (ssize_t) len);
    close(fd);
    return s_path;
}

static void s_teardown(void)
{
    for (size_t i = 0; i < s_written_count; i++)
        unlink(s_written[i]);
    s_written_count = 0;
    unsetenv("PROFEED_TESTPROG_SLOTS");
    unsetenv("PROFEED_TESTPROG_RATIO");
    unsetenv("PROFEED_TESTPROG_PYTHON");
    unsetenv("PFTEST_OLD_PYTHON");
}

TestSuite(config, .fini = s_teardown);
TestSuite(config_programs, .fini = s_teardown);

static config_t *s_new(void)
{
    config_t *config = config_new("testprog", s_keys, KEY_COUNT);
    cr_assert_not_null(config);
    return config;
}

/* Loads `text` as a file and expects it refused with a message holding each
 * of the NULL-terminated `needles`; returns the status. */
static pf_status_t s_expect_refused(const char *text, const char *needles[])
{
    config_t *config = s_new();
    pf_error_t err;
    pf_error_clear(&err);
    pf_status_t rc = config_load_file(config, s_write_cfg(text), &err);
    cr_expect_neq(rc, PF_OK, "accepted: %s", text);
    for (size_t i = 0; needles[i]; i++)
        cr_expect_not_null(strstr(err.msg, needles[i]), "\"%s\" not in: %s", needles[i], err.msg);
    /* Nothing of a refused file is kept. */
    cr_expect_eq(config_source(config, "slots"), CONFIG_FROM_DEFAULT);
    cr_expect_eq(config_int(config, "slots"), 1);
    config_destroy(&config);
    return rc;
}

/* Runs config_parse_args() on a NULL-terminated argv. */
static config_outcome_t s_parse(config_t *config, const char *args[])
{
    char *argv[16];
    int argc = 0;
    argv[argc++] = (char *) "profeed-testprog";
    for (size_t i = 0; args[i]; i++) {
        cr_assert_lt(argc, 15);
        argv[argc++] = (char *) args[i];
    }
    argv[argc] = NULL;
    size_t action = 99;
    const char *action_arg = NULL;
    return config_parse_args(config, argc, argv, "usage: profeed-testprog [options]\n", s_actions, 1, &action,
                             &action_arg);
}

/* The output of config_print() as a string (caller frees). */
static char *s_printed(const config_t *config)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    config_print(config, out);
    fclose(out);
    return text;
}

Test(config, defaults_hold_until_something_sets_a_key)
{
    config_t *config = s_new();
    cr_expect_str_eq(config_str(config, "endpoint"), "tcp://127.0.0.1:5556");
    cr_expect_null(config_str(config, "worker-id"));
    cr_expect_eq(config_int(config, "slots"), 1);
    cr_expect_float_eq(config_double(config, "ratio"), 0.5, 1e-12);
    cr_expect_eq(config_bool(config, "verbose"), false);
    cr_expect_str_eq(config_str(config, "log-level"), "info");
    cr_expect_eq(config_source(config, "slots"), CONFIG_FROM_DEFAULT);
    config_destroy(&config);
    config_destroy(&config); /* a no-op on NULL */
}

Test(config, env_names_are_program_and_key_in_upper_case)
{
    char name[64];
    cr_expect(config_env_name("broker", "heartbeat-ms", name, sizeof name));
    cr_expect_str_eq(name, "PROFEED_BROKER_HEARTBEAT_MS");
    cr_expect_not(config_env_name("broker", "heartbeat-ms", name, 16), "a cut name must not be used");
}

Test(config, a_file_sets_every_type)
{
    config_t *config = s_new();
    pf_error_t err;
    const char *path = s_write_cfg("#   every type\n"
                                   "endpoint = \"tcp://10.0.0.1:6000\"   # quoted, with a comment\n"
                                   "worker-id = gpu host 7\n"
                                   "\n"
                                   "slots = 64\n"
                                   "ratio = 0.25\n"
                                   "verbose = yes\n"
                                   "log-level = debug\n");
    cr_assert_eq(config_load_file(config, path, &err), PF_OK, "%s", err.msg);
    cr_expect_str_eq(config_str(config, "endpoint"), "tcp://10.0.0.1:6000");
    cr_expect_str_eq(config_str(config, "worker-id"), "gpu host 7");
    cr_expect_eq(config_int(config, "slots"), 64);
    cr_expect_float_eq(config_double(config, "ratio"), 0.25, 1e-12);
    cr_expect(config_bool(config, "verbose"));
    cr_expect_str_eq(config_str(config, "log-level"), "debug");
    cr_expect_eq(config_source(config, "ratio"), CONFIG_FROM_FILE);
    cr_expect_eq(config_source(config, "python"), CONFIG_FROM_DEFAULT);
    config_destroy(&config);
}

Test(config, booleans_take_the_usual_spellings)
{
    const char *yes[] = {"true", "TRUE", "yes", "on", "1"};
    const char *no[] = {"false", "No", "off", "0"};
    config_t *config = s_new();
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        cr_assert_eq(config_set(config, "verbose", yes[i], CONFIG_FROM_FLAG, "--verbose", NULL), PF_OK);
        cr_expect(config_bool(config, "verbose"), "%s", yes[i]);
    }
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        cr_assert_eq(config_set(config, "verbose", no[i], CONFIG_FROM_FLAG, "--verbose", NULL), PF_OK);
        cr_expect_not(config_bool(config, "verbose"), "%s", no[i]);
    }
    config_destroy(&config);
}

Test(config, an_empty_value_unsets_an_optional_string_only)
{
    config_t *config = s_new();
    pf_error_t err;
    cr_assert_eq(config_set(config, "worker-id", "w1", CONFIG_FROM_FLAG, "--worker-id", &err), PF_OK);
    cr_assert_eq(config_load_file(config, s_write_cfg("worker-id = \"\"\n"), &err), PF_OK, "%s", err.msg);
    cr_expect_null(config_str(config, "worker-id"));
    cr_expect_neq(config_set(config, "endpoint", "", CONFIG_FROM_FLAG, "--endpoint", &err), PF_OK);
    cr_expect_not_null(strstr(err.msg, "--endpoint needs a value"), "%s", err.msg);
    cr_expect_neq(config_set(config, "slots", "", CONFIG_FROM_FLAG, "--slots", &err), PF_OK);
    config_destroy(&config);
}

Test(config, flag_beats_environment_beats_file_beats_default)
{
    config_t *config = s_new();
    const char *path = s_write_cfg("slots = 2\nratio = 0.1\nworker-id = from-file\n");
    setenv("PROFEED_TESTPROG_SLOTS", "3", 1);
    setenv("PROFEED_TESTPROG_RATIO", "0.2", 1);
    /* The flag comes before --config on the line and still wins. */
    const char *args[] = {"--slots", "4", "--config", path, NULL};
    cr_assert_eq(s_parse(config, args), CONFIG_RUN);
    cr_expect_eq(config_int(config, "slots"), 4);
    cr_expect_eq(config_source(config, "slots"), CONFIG_FROM_FLAG);
    cr_expect_float_eq(config_double(config, "ratio"), 0.2, 1e-12);
    cr_expect_eq(config_source(config, "ratio"), CONFIG_FROM_ENV);
    cr_expect_str_eq(config_str(config, "worker-id"), "from-file");
    cr_expect_eq(config_source(config, "worker-id"), CONFIG_FROM_FILE);
    cr_expect_str_eq(config_str(config, "log-level"), "info");
    cr_expect_eq(config_source(config, "log-level"), CONFIG_FROM_DEFAULT);
    config_destroy(&config);
}

Test(config, an_empty_variable_counts_as_unset_and_the_old_name_is_a_fallback)
{
    config_t *config = s_new();
    pf_error_t err;
    setenv("PROFEED_TESTPROG_SLOTS", "", 1);
    setenv("PFTEST_OLD_PYTHON", "/usr/bin/python3.11", 1);
    cr_assert_eq(config_load_env(config, &err), PF_OK, "%s", err.msg);
    cr_expect_eq(config_source(config, "slots"), CONFIG_FROM_DEFAULT);
    cr_expect_str_eq(config_str(config, "python"), "/usr/bin/python3.11");
    setenv("PROFEED_TESTPROG_PYTHON", "/opt/py/bin/python", 1);
    cr_assert_eq(config_load_env(config, &err), PF_OK, "%s", err.msg);
    cr_expect_str_eq(config_str(config, "python"), "/opt/py/bin/python");
    config_destroy(&config);
}

Test(config, a_bad_variable_is_named_with_its_key_and_type)
{
    config_t *config = s_new();
    pf_error_t err;
    setenv("PROFEED_TESTPROG_RATIO", "half", 1);
    cr_expect_eq(config_load_env(config, &err), PF_EBADINPUT);
    cr_expect_str_eq(err.msg, "PROFEED_TESTPROG_RATIO: ratio needs a number in 0..1, got \"half\"");
    config_destroy(&config);
}

Test(config, bad_values_name_file_line_key_and_expected_type)
{
    s_expect_refused("slots = 2\n\nslots-x = 1\n", (const char *[]){":3: unknown key \"slots-x\"", "slots, ratio", NULL});
    s_expect_refused("# c\nslots = 65\n",
                     (const char *[]){":2: slots needs a whole number in 1..64, got \"65\"", NULL});
    s_expect_refused("slots = 3x\n", (const char *[]){":1: slots needs a whole number", "\"3x\"", NULL});
    s_expect_refused("slots = 99999999999999999999\n", (const char *[]){"slots needs a whole number", NULL});
    s_expect_refused("slots = 2\nratio = nan\n", (const char *[]){":2: ratio needs a number in 0..1", NULL});
    s_expect_refused("slots = 2\nratio = 1e999\n", (const char *[]){":2: ratio needs a number", NULL});
    s_expect_refused("slots = 2\nratio = 1.5\n", (const char *[]){":2: ratio needs a number in 0..1", NULL});
    s_expect_refused("slots = 2\nverbose = maybe\n", (const char *[]){":2: verbose needs true or false", NULL});
    s_expect_refused("slots = 2\nlog-level = loud\n",
                     (const char *[]){":2: log-level needs one of debug, info, warn, got \"loud\"", NULL});
    s_expect_refused("slots = 2\nendpoint =\n", (const char *[]){":2: endpoint needs a value", NULL});
    s_expect_refused("slots = 2\nslots = 3\n", (const char *[]){":2: slots is set twice (first on line 1)", NULL});
    s_expect_refused("slots = 2\nworker-id = \"a\" b\n", (const char *[]){":2: malformed ZPL: invalid syntax", NULL});
}

Test(config, malformed_zpl_names_the_line_and_stdout_stays_clean)
{
    /* zconfig prints its syntax errors on stdout; none may reach it. */
    fflush(stdout);
    FILE *capture = tmpfile();
    cr_assert_not_null(capture);
    int saved = dup(STDOUT_FILENO);
    dup2(fileno(capture), STDOUT_FILENO);
    s_expect_refused("slots = 2\n  ratio = 0.1\n",
                     (const char *[]){":2: malformed ZPL: indent 4 spaces at once", NULL});
    s_expect_refused("slots = 2\nworker-id = \"open\n", (const char *[]){":2: malformed ZPL: missing \"", NULL});
    s_expect_refused("slots: 2\n", (const char *[]){":1: malformed ZPL", NULL});
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    cr_expect_eq(ftell(capture), 0, "zconfig wrote to stdout");
    fclose(capture);
}

Test(config, sections_bytes_and_sizes_zconfig_would_misread_are_refused)
{
    s_expect_refused("slots = 2\nserver\n    slots = 3\n",
                     (const char *[]){":2: \"server\" has indented lines below it", "top-level keys only", NULL});
    s_expect_refused("slots = 2\nworker-id = caf\xc3\xa9\n", (const char *[]){":2: byte 0xc3", "ASCII", NULL});
    char line[1200];
    memset(line, 'a', sizeof line - 1);
    line[sizeof line - 1] = '\0';
    memcpy(line, "python = ", 9);
    char text[1300];
    snprintf(text, sizeof text, "slots = 2\n%s\n", line);
    cr_expect_eq(s_expect_refused(text, (const char *[]){":2: line longer than 1024 bytes", NULL}), PF_ETOOBIG);
}

Test(config, a_missing_file_is_named)
{
    config_t *config = s_new();
    pf_error_t err;
    cr_expect_eq(config_load_file(config, "/nonexistent/profeed.cfg", &err), PF_EBADINPUT);
    cr_expect_str_eq(err.msg, "cannot read config file /nonexistent/profeed.cfg: No such file or directory");
    config_destroy(&config);
}

Test(config, print_config_says_where_each_value_came_from_and_reads_back)
{
    config_t *config = s_new();
    const char *path = s_write_cfg("ratio = 0.75\n");
    setenv("PROFEED_TESTPROG_SLOTS", "9", 1);
    const char *args[] = {"--config", path, "--worker-id", "a \"quoted\" # id", "--verbose", NULL};
    cr_assert_eq(s_parse(config, args), CONFIG_RUN);
    char *text = s_printed(config);
    char want[128];
    snprintf(want, sizeof want, "ratio = 0.75                             # file %s:1\n", path);
    cr_expect_not_null(strstr(text, want), "%s", text);
    cr_expect_not_null(strstr(text, "slots = 9                                # environment PROFEED_TESTPROG_SLOTS\n"));
    cr_expect_not_null(strstr(text, "worker-id = 'a \"quoted\" # id'            # flag --worker-id\n"), "%s", text);
    cr_expect_not_null(strstr(text, "verbose = true                           # flag --verbose\n"));
    cr_expect_not_null(strstr(text, "log-level = \"info\"                       # default\n"));
    cr_expect_not_null(strstr(text, "python = \"\"                              # default (unset)\n"));

    /* The printout is a config file that gives the same values. */
    config_t *again = s_new();
    pf_error_t err;
    cr_assert_eq(config_load_file(again, s_write_cfg(text), &err), PF_OK, "%s\n%s", err.msg, text);
    cr_expect_str_eq(config_str(again, "worker-id"), "a \"quoted\" # id");
    cr_expect_eq(config_int(again, "slots"), 9);
    cr_expect_float_eq(config_double(again, "ratio"), 0.75, 1e-12);
    cr_expect(config_bool(again, "verbose"));
    cr_expect_null(config_str(again, "python"));
    free(text);
    config_destroy(&again);
    config_destroy(&config);
}

Test(config, the_command_line_refuses_bad_flags_and_runs_actions)
{
    config_t *config = s_new();
    cr_expect_eq(s_parse(config, (const char *[]){"--slots", "0", NULL}), CONFIG_EXIT_USAGE);
    cr_expect_eq(s_parse(config, (const char *[]){"extra", NULL}), CONFIG_EXIT_USAGE);
    cr_expect_eq(s_parse(config, (const char *[]){"--config", "/nonexistent.cfg", NULL}), CONFIG_EXIT_USAGE);
    cr_expect_eq(s_parse(config, (const char *[]){"--print-plan", "core", NULL}), CONFIG_ACTION);
    cr_expect_eq(s_parse(config, (const char *[]){"--verbose=false", NULL}), CONFIG_RUN);
    cr_expect_not(config_bool(config, "verbose"));
    config_destroy(&config);
}

/* ------------------------------------------------------------------------
 * The programs: each reads its sample config, and its defaults are the
 * library's. */

#define BIN(path) PF_BINARY_DIR "/" path
#define SAMPLE(name) PF_SOURCE_DIR "/deploy/config/" name

/* Runs a command line, returns its exit status and its output (caller frees). */
static int s_run(const char *cmdline, char **out)
{
    FILE *p = popen(cmdline, "r");
    cr_assert_not_null(p, "cannot run %s", cmdline);
    size_t cap = 1 << 14, len = 0, got;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    while ((got = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (len + 1 == cap) {
            buf = realloc(buf, cap *= 2);
            cr_assert_not_null(buf);
        }
    }
    buf[len] = '\0';
    int status = pclose(p);
    *out = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Runs `binary --config sample --print-config`: exit 0, valid ZPL, and every
 * key set by the sample (each key is documented there). Returns the tree. */
static zconfig_t *s_sample_accepted(const char *binary, const char *sample)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s --config %s --print-config", binary, sample);
    char *out;
    cr_assert_eq(s_run(cmd, &out), 0, "%s", cmd);
    size_t keys = 0;
    for (char *line = out; *line;) {
        char *eol = strchr(line, '\n');
        if (eol)
            *eol = '\0';
        if (line[0] != '#') {
            keys++;
            cr_expect_not_null(strstr(line, "# file " SAMPLE("")), "not from the sample: %s", line);
        }
        line = eol ? eol + 1 : line + strlen(line);
    }
    cr_expect_gt(keys, 5);
    free(out);
    snprintf(cmd, sizeof cmd, "%s --config %s --print-config", binary, sample);
    cr_assert_eq(s_run(cmd, &out), 0);
    zconfig_t *tree = zconfig_str_load(out);
    cr_assert_not_null(tree, "--print-config is not ZPL:\n%s", out);
    free(out);
    return tree;
}

static long long s_num(zconfig_t *tree, const char *key)
{
    const char *text = zconfig_get(tree, key, NULL);
    cr_assert_not_null(text, "%s missing", key);
    return strtoll(text, NULL, 10);
}

Test(config_programs, broker_reads_its_sample_and_its_defaults_are_the_librarys)
{
    zconfig_t *tree = s_sample_accepted(BIN("broker/profeed-broker"), SAMPLE("profeed-broker.cfg"));
    broker_config_t d;
    broker_config_default(&d);
    cr_expect_str_eq(zconfig_get(tree, "agents", ""), d.agent_endpoint);
    cr_expect_str_eq(zconfig_get(tree, "workers", ""), d.worker_endpoint);
    cr_expect_eq(s_num(tree, "heartbeat-ms"), d.heartbeat_ms);
    cr_expect_eq(s_num(tree, "liveness"), d.liveness);
    cr_expect_eq(s_num(tree, "max-attempts"), d.max_attempts);
    cr_expect_eq(s_num(tree, "timeout-s"), d.default_timeout_s);
    cr_expect_eq(s_num(tree, "retain-s") * 1000, d.retain_ms);
    cr_expect_eq(s_num(tree, "max-finished"), d.max_finished);
    cr_expect_eq((size_t) s_num(tree, "max-msg-mb") * 1024 * 1024, d.max_msg);
    cr_expect_str_eq(zconfig_get(tree, "state-dir", "x"), "");
    cr_expect_str_eq(zconfig_get(tree, "journal-fsync", ""), d.journal_sync ? "true" : "false");
    cr_expect_eq((size_t) s_num(tree, "max-retained-mb") * 1024 * 1024, d.max_retained_bytes);
    cr_expect_eq(s_num(tree, "max-queued"), d.max_queued);
    cr_expect_eq(s_num(tree, "max-agent-jobs"), d.max_agent_jobs);
    cr_expect_eq(s_num(tree, "bind-retry-ms"), d.bind_retry_ms);
    zconfig_destroy(&tree);
}

Test(config_programs, collector_reads_its_sample_and_its_defaults_are_the_librarys)
{
    zconfig_t *tree = s_sample_accepted(BIN("collector/profeed-collector"), SAMPLE("profeed-collector.cfg"));
    collector_config_t d;
    collector_config_default(&d);
    cr_expect_str_eq(zconfig_get(tree, "broker", ""), d.broker_endpoint);
    cr_expect_eq(s_num(tree, "slots"), d.slots);
    cr_expect_eq(s_num(tree, "pass-timeout-s"), d.pass_timeout_s);
    cr_expect_eq((size_t) s_num(tree, "max-output-mb") * 1024 * 1024, d.max_output);
    cr_expect_eq(s_num(tree, "pass-delay-ms"), d.pass_delay_ms);
    cr_expect_eq(s_num(tree, "attempts"), d.attempts);
    cr_expect_eq(s_num(tree, "retry-backoff-ms"), d.retry_backoff_ms);
    cr_expect_eq(s_num(tree, "heartbeat-ms"), d.heartbeat_ms);
    cr_expect_eq(s_num(tree, "liveness"), d.liveness);
    cr_expect_str_eq(zconfig_get(tree, "ncu-sudo", ""), "false");
    zconfig_destroy(&tree);
}

Test(config_programs, analyzer_reads_its_sample_and_its_defaults_are_the_librarys)
{
    zconfig_t *tree = s_sample_accepted(BIN("analyzer/profeed-analyzer"), SAMPLE("profeed-analyzer.cfg"));
    worker_config_t d;
    worker_config_default(&d);
    cr_expect_str_eq(zconfig_get(tree, "broker", ""), d.broker_endpoint);
    cr_expect_eq(s_num(tree, "max-jobs"), d.max_jobs);
    cr_expect_eq(s_num(tree, "heartbeat-ms"), d.heartbeat_ms);
    cr_expect_eq(s_num(tree, "liveness"), d.liveness);
    cr_expect_eq((size_t) s_num(tree, "memory-mb") * 1024 * 1024, d.memory_limit);
    zconfig_destroy(&tree);
}

Test(config_programs, a_program_refuses_a_bad_file_with_exit_two_and_says_where)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s --config %s --print-config 2>&1", BIN("analyzer/profeed-analyzer"),
             s_write_cfg("max-jobs = 2\nliveness = many\n"));
    char *out;
    cr_expect_eq(s_run(cmd, &out), 2);
    char want[512];
    snprintf(want, sizeof want, "profeed-analyzer: %s:2: liveness needs a whole number in 1..100, got \"many\"\n",
             s_path);
    cr_expect_str_eq(out, want);
    free(out);
}

Test(config_programs, flags_and_the_environment_beat_the_sample)
{
    char *out;
    int rc = s_run("PROFEED_BROKER_LIVENESS=5 " BIN("broker/profeed-broker") " --config " SAMPLE("profeed-broker.cfg")
                   " --heartbeat-ms 200 --log-format json --print-config",
                   &out);
    cr_expect_eq(rc, 0);
    cr_expect_not_null(strstr(out, "heartbeat-ms = 200                       # flag --heartbeat-ms\n"), "%s", out);
    cr_expect_not_null(strstr(out, "liveness = 5                             # environment PROFEED_BROKER_LIVENESS\n"));
    cr_expect_not_null(strstr(out, "log-format = \"json\"                      # flag --log-format\n"));
    cr_expect_not_null(strstr(out, "max-attempts = 3                         # file "));
    free(out);
}

/* pf_error and pf_log: the small contracts every other module leans on. */
#include "pf_error.h"
#include "pf_log.h"
#include "utf8.h"

#include <criterion/criterion.h>

#include "utf8.h"
#include <criterion/redirect.h>
#include <stdio.h>
#include <string.h>

Test(pf_error, set_records_code_and_message_and_returns_the_code)
{
    pf_error_t err = {0};
    pf_status_t rc = pf_error_set(&err, PF_EBADINPUT, "%s:%d: expected %s", "raw.csv", 12, "a number");
    cr_assert_eq(rc, PF_EBADINPUT);
    cr_assert_eq(err.code, PF_EBADINPUT);
    cr_assert_str_eq(err.msg, "raw.csv:12: expected a number");
}

Test(pf_error, every_function_accepts_a_null_error)
{
    cr_assert_eq(pf_error_set(NULL, PF_EIO, "ignored %d", 1), PF_EIO);
    pf_error_prefix(NULL, "ignored");
    pf_error_clear(NULL);
}

Test(pf_error, prefix_adds_context_on_the_way_up)
{
    pf_error_t err = {0};
    pf_error_set(&err, PF_ETOOBIG, "field files: 300 entries");
    pf_error_prefix(&err, "job %s", "3f2c");
    cr_assert_eq(err.code, PF_ETOOBIG, "the code is kept");
    cr_assert_str_eq(err.msg, "job 3f2c: field files: 300 entries");
}

Test(pf_error, prefix_on_a_full_message_keeps_the_start_and_marks_the_cut)
{
    pf_error_t err = {0};
    char cause[PF_ERROR_MSG_MAX];
    memset(cause, 'x', sizeof cause - 1);
    cause[sizeof cause - 1] = '\0';
    pf_error_set(&err, PF_EBADINPUT, "%s", cause);
    cr_assert_eq(strlen(err.msg), PF_ERROR_MSG_MAX - 1);
    pf_error_prefix(&err, "context");
    cr_assert_eq(strncmp(err.msg, "context: xxx", 12), 0, "%s", err.msg);
    cr_assert_eq(strlen(err.msg), PF_ERROR_MSG_MAX - 1);
    cr_assert_str_eq(err.msg + PF_ERROR_MSG_MAX - 4, "...");
}

Test(pf_error, clear_resets_to_ok)
{
    pf_error_t err = {0};
    pf_error_set(&err, PF_EPROTO, "bad version");
    pf_error_clear(&err);
    cr_assert_eq(err.code, PF_OK);
    cr_assert_str_empty(err.msg);
}

Test(pf_error, status_names_are_stable_and_out_of_range_is_unknown)
{
    cr_assert_str_eq(pf_status_name(PF_OK), "ok");
    cr_assert_str_eq(pf_status_name(PF_EBADINPUT), "bad input");
    cr_assert_str_eq(pf_status_name(PF_ETOOBIG), "too big");
    cr_assert_str_eq(pf_status_name(PF_EPROTO), "protocol error");
    for (int i = 0; i < PF__ECOUNT; i++)
        cr_assert_not_null(pf_status_name((pf_status_t) i), "status %d has no name", i);
    cr_assert_str_eq(pf_status_name(PF__ECOUNT), "unknown");
    cr_assert_str_eq(pf_status_name((pf_status_t) -1), "unknown");
}

Test(pf_log, parse_level_takes_the_five_names_in_any_case)
{
    pf_log_level_t level = PF_LOG_INFO;
    cr_assert(pf_log_parse_level("debug", &level));
    cr_assert_eq(level, PF_LOG_DEBUG);
    cr_assert(pf_log_parse_level("WARN", &level));
    cr_assert_eq(level, PF_LOG_WARN);
    cr_assert(pf_log_parse_level("Off", &level));
    cr_assert_eq(level, PF_LOG_OFF);
    cr_assert_not(pf_log_parse_level("verbose", &level));
    cr_assert_not(pf_log_parse_level("", &level));
    cr_assert_not(pf_log_parse_level(NULL, &level));
    cr_assert_eq(level, PF_LOG_OFF, "a refused name leaves the level alone");
}

/* Reads the next line the test wrote to its redirected stderr. */
static void s_read_line(char *buf, size_t size)
{
    fflush(stderr);
    cr_assert_not_null(fgets(buf, (int) size, cr_get_redirected_stderr()), "nothing was logged");
}

Test(pf_log, text_lines_carry_level_component_and_message, .init = cr_redirect_stderr)
{
    pf_log_set_json(false);
    pf_log_set_level(PF_LOG_INFO);
    pf_log_info("broker", "job %s queued", "3f2c");
    char line[512];
    s_read_line(line, sizeof line);
    cr_assert_not_null(strstr(line, "Z INFO  broker: job 3f2c queued\n"), "%s", line);
}

Test(pf_log, messages_below_the_level_are_dropped, .init = cr_redirect_stderr)
{
    pf_log_set_json(false);
    pf_log_set_level(PF_LOG_WARN);
    pf_log_info("broker", "dropped");
    pf_log_debug("broker", "dropped too");
    pf_log_error("broker", "kept");
    char line[512];
    s_read_line(line, sizeof line);
    cr_assert_not_null(strstr(line, "ERROR broker: kept"), "first line logged: %s", line);
    cr_assert_eq(pf_log_level(), PF_LOG_WARN);
}

Test(pf_log, json_lines_escape_quotes_and_control_characters, .init = cr_redirect_stderr)
{
    pf_log_set_json(true);
    pf_log_set_level(PF_LOG_DEBUG);
    pf_log_warn("collector \"a\"", "ncu said \"%s\"\nthen exited", "==ERROR==");
    char line[512];
    s_read_line(line, sizeof line);
    cr_assert_eq(strncmp(line, "{\"ts\":\"", 7), 0, "%s", line);
    cr_assert_not_null(strstr(line, "\"level\":\"WARN\""), "%s", line);
    cr_assert_not_null(strstr(line, "\"component\":\"collector \\\"a\\\"\""), "%s", line);
    cr_assert_not_null(strstr(line, "\"msg\":\"ncu said \\\"==ERROR==\\\"\\nthen exited\"}\n"), "%s", line);
    pf_log_set_json(false);
}

/* A profiler's bytes in a message must not make the line invalid JSON: a
 * byte that is not UTF-8 becomes '?', valid multi-byte text stays. */
Test(pf_log, json_lines_stay_valid_utf8_when_the_message_is_not, .init = cr_redirect_stderr)
{
    pf_log_set_json(true);
    pf_log_warn("collector", "kernel caf\xc3\xa9 wrote \xff\xfe then \xe2\x82");
    char line[512];
    s_read_line(line, sizeof line);
    cr_assert_not_null(strstr(line, "\"msg\":\"kernel caf\xc3\xa9 wrote ?? then ??\"}\n"), "%s", line);
    cr_assert_eq(utf8_invalid_at(line), -1, "%s", line);
    pf_log_set_json(false);
}

#!/usr/bin/env bash
# The banned-function check (ctest: banned_functions). Fails, naming file and
# line, when a C source of the project calls a function on this list. The
# list is curl's (scripts/checksrc.pl, BANNEDFUNC) cut to what applies to a
# POSIX C11 program, plus the C library's no-error converters:
#
#   gets                      no bound at all (removed from C11).
#   sprintf vsprintf          no bound: snprintf, with its result checked for truncation.
#   strcpy strcat             no bound: snprintf, or memcpy with a length checked first.
#   strncat                   its bound is the space left, not the buffer's size: an
#                             off-by-one waiting to happen (curl bans it too).
#   strncpy                   leaves no NUL when it truncates, and pads with NULs when it
#                             does not (curl bans it since 2023).
#   strtok                    hidden static state: two threads (the collector's slots) or
#                             two nested loops break each other; strtok_r has none and stays allowed.
#   atoi atol atoll atof      no way to tell "0" from garbage or an overflow (undefined
#                             behaviour): strtol/strtod with the end pointer and errno.
#   access                    checked, then opened: the file can change between the two
#                             (TOCTOU); open it and report open's error instead.
#   tmpnam tempnam mktemp     the same race between the name and the file: mkstemp, mkdtemp.
#   asctime ctime gmtime localtime
#                             results in one static buffer shared by every thread: the _r forms.
#
# Left off, on purpose: sscanf (curl bans it; every use here has a field width on
# each %s and %[ and checks the count it returns), strerror (glibc's is
# thread-safe for the errno values we pass), system/popen (only tests use them).
#
# A line that must keep one of these says why on the line itself, after the
# marker `banned-ok:` (for example access(X_OK) in a PATH search, where no open
# follows). The check reads every .c and .h under the source folder except
# build folders.
#
# Usage: banned_check.sh SOURCE_DIR     check the tree
#        banned_check.sh --self-test      prove the check fails on each banned
#                                         call and passes the allowed look-alikes
set -euo pipefail
banned='gets|sprintf|vsprintf|strcpy|strcat|strncat|strncpy|strtok|atoi|atol|atoll|atof|access|tmpnam|tempnam|mktemp|asctime|ctime|gmtime|localtime'
# A call: the name not preceded by an identifier character or member access
# (snprintf, vsnprintf, strtok_r, self->access( do not match), then "(".
pattern="(^|[^A-Za-z0-9_.>])($banned)[[:space:]]*\\("

# s_check DIR: prints the offending lines; status 1 when there are any.
# s_files DIR: its C files, NUL-separated, build folders and .git left out.
s_files() {
  find "$1" \( -path "$1/build*" -o -path "$1/.git" \) -prune -o \( -name '*.c' -o -name '*.h' \) -type f -print0
}
s_check() {
  local hits
  hits=$(s_files "$1" | xargs -0 grep -nE "$pattern" /dev/null | grep -v 'banned-ok:' || true)
  [ -z "$hits" ] && return 0
  echo "$hits"
  return 1
}

if [ "${1:-}" = "--self-test" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  status=0
  for name in ${banned//|/ }; do
    printf 'int f(char *d, const char *s)\n{\n    return (int) %s (d, s);\n}\n' "$name" >"$tmp/bad.c"
    if s_check "$tmp" >/dev/null; then
      echo "FAIL - a call of $name was not caught"
      status=1
    fi
  done
  printf '%s\n' 'n = snprintf(b, sizeof b, "%s", s);' 'vsnprintf(b, n, f, ap);' 't = strtok_r(s, ",", &save);' \
                'self->access(x);' 'x.atoi(y);' 'my_strcpy(a, b);' 'access(p, X_OK); /* banned-ok: a reason */' >"$tmp/bad.c"
  if ! s_check "$tmp"; then
    echo "FAIL - an allowed line was refused (above)"
    status=1
  fi
  [ $status -eq 0 ] && echo "banned functions self-test: every banned call caught, every allowed one passed"
  exit $status
fi

src=${1:?usage: banned_check.sh SOURCE_DIR | --self-test}
count=$(s_files "$src" | tr -cd '\0' | wc -c)
if ! out=$(s_check "$src"); then
  echo "banned functions (tests/banned_check.sh says why each is banned and what to use):"
  echo "$out"
  exit 1
fi
echo "banned functions: none in $count C files"

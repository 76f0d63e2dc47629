#include "wrapper.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The three call forms, as Python that defines run(). */
static const char s_call_plain[] =
    "def run():\n"
    "    return kernel_function(*inputs)";

static const char s_call_init_inputs[] =
    "def run():\n"
    "    # e.g. RMSNorm: kernel_function(x, features, eps)\n"
    "    return kernel_function(*inputs, *init_inputs)";

/* KernelAgent looks for the layer under fixed names (conv1, linear, fc, ...);
 * the first module with a weight tensor covers those and any other name. Only
 * the layer settings kernel_function accepts are passed. */
static const char s_call_model[] =
    "model = problem.Model(*init_inputs).cuda().eval()\n"
    "layer = next((m for m in model.modules() if isinstance(getattr(m, \"weight\", None), torch.Tensor)), None)\n"
    "if layer is None:\n"
    "    sys.exit(\"profeed wrapper: Model has no layer with a weight tensor to pass to kernel_function\")\n"
    "accepted = inspect.signature(kernel_function).parameters\n"
    "takes_any = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in accepted.values())\n"
    "layer_args = {}\n"
    "for attr in (\"stride\", \"padding\", \"dilation\", \"groups\"):\n"
    "    value = getattr(layer, attr, None)\n"
    "    if value is None or isinstance(value, str) or not (takes_any or attr in accepted):\n"
    "        continue\n"
    "    layer_args[attr] = value[0] if isinstance(value, (tuple, list)) else value\n"
    "\n"
    "\n"
    "def run():\n"
    "    with torch.no_grad():\n"
    "        return kernel_function(inputs[0], layer.weight, layer.bias, **layer_args)";

const char *wrapper_case_name(wrapper_case_t call)
{
    switch (call) {
    case WRAPPER_PLAIN: return "plain";
    case WRAPPER_MODEL: return "model";
    case WRAPPER_INIT_INPUTS: return "init_inputs";
    }
    return "plain";
}

int wrapper_case_parse(const char *name, wrapper_case_t *call)
{
    static const wrapper_case_t all[] = {WRAPPER_PLAIN, WRAPPER_MODEL, WRAPPER_INIT_INPUTS};
    for (size_t i = 0; name && i < 3; i++) {
        if (strcmp(name, wrapper_case_name(all[i])) == 0) {
            *call = all[i];
            return 0;
        }
    }
    return -1;
}

static bool s_ident_char(char c)
{
    return isalnum((unsigned char) c) || c == '_';
}

/* The text between the parentheses of `def NAME(`, bounded by `cap`. */
static bool s_def_params(const char *src, const char *name, char *out, size_t cap)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "def %s(", name);
    const char *p = src;
    while ((p = strstr(p, pattern)) != NULL) {
        if (p == src || !s_ident_char(p[-1]))
            break;
        p++;
    }
    if (!p)
        return false;
    p += strlen(pattern);
    size_t n = 0;
    for (int depth = 1; *p && n + 1 < cap; p++) {
        depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
        if (depth == 0)
            break;
        out[n++] = *p;
    }
    out[n] = '\0';
    return true;
}

/* Whether a parameter list names `param` as a whole word (not `weights`). */
static bool s_has_param(const char *params, const char *param)
{
    size_t len = strlen(param);
    for (const char *p = params; (p = strstr(p, param)) != NULL; p += len) {
        bool start = p == params || !s_ident_char(p[-1]);
        bool end = !s_ident_char(p[len]);
        if (start && end)
            return true;
    }
    return false;
}

/* Whether get_init_inputs() returns an empty list or tuple (or nothing):
 * judged from its first `return`, which is what KernelBench problems have. */
static bool s_init_inputs_empty(const char *problem_src)
{
    const char *def = strstr(problem_src, "def get_init_inputs(");
    if (!def)
        return true;
    const char *ret = strstr(def, "return");
    if (!ret)
        return true;
    /* Another top-level definition before the return: the body returned nothing. */
    const char *next_def = strstr(def + 1, "\ndef ");
    if (next_def && next_def < ret)
        return true;
    ret += strlen("return");
    char expr[64];
    size_t n = 0;
    for (; *ret && *ret != '\n' && *ret != '#' && n + 1 < sizeof expr; ret++) {
        if (!isspace((unsigned char) *ret))
            expr[n++] = *ret;
    }
    expr[n] = '\0';
    return n == 0 || strcmp(expr, "[]") == 0 || strcmp(expr, "()") == 0 || strcmp(expr, "list()") == 0 ||
           strcmp(expr, "tuple()") == 0 || strcmp(expr, "None") == 0;
}

wrapper_case_t wrapper_detect(const char *kernel_src, const char *problem_src)
{
    char params[4096];
    if (kernel_src && s_def_params(kernel_src, "kernel_function", params, sizeof params) &&
        s_has_param(params, "weight"))
        return WRAPPER_MODEL;
    if (problem_src && !s_init_inputs_empty(problem_src))
        return WRAPPER_INIT_INPUTS;
    return WRAPPER_PLAIN;
}

typedef struct {
    char *buf;
    size_t len, cap;
    bool oom;
} out_t;

static void s_put(out_t *o, const char *s, size_t n)
{
    if (o->oom)
        return;
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 8192;
        while (cap < o->len + n + 1)
            cap *= 2;
        char *grown = realloc(o->buf, cap);
        if (!grown) {
            o->oom = true;
            return;
        }
        o->buf = grown;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    o->buf[o->len] = '\0';
}

static void s_puts(out_t *o, const char *s)
{
    s_put(o, s, strlen(s));
}

/* A file name as a Python bytes literal (decoded with os.fsdecode in the
 * wrapper): every byte outside printable ASCII, and the quote and backslash,
 * as \xNN, so no name can end the literal or change the program. */
static void s_py_bytes(out_t *o, const char *s)
{
    s_puts(o, "b'");
    for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
        if (*p < 0x20 || *p >= 0x7f || *p == '\'' || *p == '\\') {
            char esc[8];
            snprintf(esc, sizeof esc, "\\x%02x", *p);
            s_puts(o, esc);
        } else {
            s_put(o, (const char *) p, 1);
        }
    }
    s_puts(o, "'");
}

static bool s_valid_range(const char *r)
{
    size_t n = r ? strlen(r) : 0;
    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!s_ident_char(r[i]) && r[i] != '.' && r[i] != ':' && r[i] != '-')
            return false;
    }
    return true;
}

char *wrapper_render(const char *tmpl, size_t len, const wrapper_params_t *params, pf_error_t *err)
{
    if (!params->kernel_file || !*params->kernel_file || !params->problem_file || !*params->problem_file)
        return pf_error_set(err, PF_EBADINPUT, "wrapper: the kernel and problem file names are required"), NULL;
    if (params->warmup > 100)
        return pf_error_set(err, PF_EBADINPUT, "wrapper: %u warm-up launches; at most 100", params->warmup), NULL;
    if (!s_valid_range(params->nvtx_range))
        return pf_error_set(err, PF_EBADINPUT,
                            "wrapper: NVTX range \"%.64s\" must be 1..64 characters of [A-Za-z0-9_.:-]",
                            params->nvtx_range ? params->nvtx_range : ""),
               NULL;
    out_t o = {0};
    const char *end = tmpl + len;
    for (const char *p = tmpl; p < end;) {
        const char *at = memchr(p, '@', (size_t) (end - p));
        if (!at) {
            s_put(&o, p, (size_t) (end - p));
            break;
        }
        s_put(&o, p, (size_t) (at - p));
        const char *close = memchr(at + 1, '@', (size_t) (end - at - 1));
        size_t name_len = close ? (size_t) (close - at - 1) : 0;
        char name[32] = "";
        if (close && name_len > 0 && name_len < sizeof name) {
            memcpy(name, at + 1, name_len);
            name[name_len] = '\0';
        }
        if (strcmp(name, "KERNEL_FILE") == 0) {
            s_py_bytes(&o, params->kernel_file);
        } else if (strcmp(name, "PROBLEM_FILE") == 0) {
            s_py_bytes(&o, params->problem_file);
        } else if (strcmp(name, "NVTX_RANGE") == 0) {
            s_puts(&o, params->nvtx_range);
        } else if (strcmp(name, "WARMUP") == 0) {
            char n[16];
            snprintf(n, sizeof n, "%u", params->warmup);
            s_puts(&o, n);
        } else if (strcmp(name, "CASE") == 0) {
            s_puts(&o, wrapper_case_name(params->call));
        } else if (strcmp(name, "CALL") == 0) {
            s_puts(&o, params->call == WRAPPER_MODEL         ? s_call_model
                       : params->call == WRAPPER_INIT_INPUTS ? s_call_init_inputs
                                                             : s_call_plain);
        } else {
            /* The template is ours: an unknown placeholder is a bug in it,
             * reported rather than written out as Python that cannot run. */
            free(o.buf);
            return pf_error_set(err, PF_EBADINPUT, "wrapper template: unknown placeholder at byte %zu",
                                (size_t) (at - tmpl)),
                   NULL;
        }
        p = close + 1;
    }
    if (o.oom || !o.buf) {
        free(o.buf);
        return pf_error_set(err, PF_ENOMEM, "wrapper: out of memory"), NULL;
    }
    return o.buf;
}

/* wrapper: the Python program a kernel + problem job runs under ncu, for
 * each of KernelAgent's three call forms. Each filled template must compile
 * (python3 -m py_compile, when python3 is installed) and call
 * kernel_function the right way. */
#include "wrapper.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "proc_run.h"

static char *s_fixture(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/wrapper/%s", PF_FIXTURE_DIR, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    char *buf = calloc(1, 65536);
    size_t n = fread(buf, 1, 65535, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static wrapper_case_t s_detect(const char *kernel, const char *problem)
{
    char *k = s_fixture(kernel), *p = s_fixture(problem);
    wrapper_case_t c = wrapper_detect(k, p);
    free(k);
    free(p);
    return c;
}

/* Fills the template for `call` and checks the program compiles. */
static char *s_render(wrapper_case_t call, const char *kernel_file, const char *problem_file)
{
    wrapper_params_t params = {
        .kernel_file = kernel_file,
        .problem_file = problem_file,
        .call = call,
        .warmup = WRAPPER_WARMUP,
        .nvtx_range = WRAPPER_NVTX_RANGE,
    };
    pf_error_t err;
    char *program = wrapper_render(wrapper_template, wrapper_template_len, &params, &err);
    cr_assert_not_null(program, "%s", err.msg);
    cr_assert_null(strchr(program, '@'), "a placeholder was left unfilled");
    char python[4096];
    if (!proc_find("python3", python, sizeof python)) {
        cr_log_warn("python3 is not installed: the wrapper for case %s was not compiled", wrapper_case_name(call));
        return program;
    }
    char path[] = "/tmp/profeed-wrapper-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    size_t len = strlen(program);
    cr_assert_eq(write(fd, program, len), (ssize_t) len);
    close(fd);
    /* py_compile checks syntax without importing torch or running anything. */
    char cfile[64];
    snprintf(cfile, sizeof cfile, "%s.pyc", path);
    char *argv[] = {python, "-c", "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], "
                                  "doraise=True)", path, cfile, NULL};
    proc_spec_t spec = {.argv = argv, .timeout_ms = 60000, .max_output = 65536, .cancel_fd = -1};
    proc_result_t r;
    cr_assert_eq(proc_run(&spec, &r, &err), PF_OK, "%s", err.msg);
    unlink(path);
    unlink(cfile);
    cr_assert_eq(r.exit_status, 0, "py_compile failed for case %s: %s", wrapper_case_name(call), r.stderr_tail);
    free(r.output);
    return program;
}

Test(wrapper, triton_vector_add_is_plain_and_called_with_the_inputs_only)
{
    cr_assert_eq(s_detect("vector_add_kernel.py", "vector_add_problem.py"), WRAPPER_PLAIN);
    char *py = s_render(WRAPPER_PLAIN, "vector_add_kernel.py", "vector_add_problem.py");
    cr_assert_not_null(strstr(py, "    return kernel_function(*inputs)\n"));
    cr_assert_not_null(strstr(py, "kernel = load(\"profeed_kernel\", b'vector_add_kernel.py')"));
    cr_assert_not_null(strstr(py, "problem = load(\"profeed_problem\", b'vector_add_problem.py')"));
    /* Warm-up outside the range, the measured launch inside it. */
    const char *warm = strstr(py, "for _ in range(WARMUP):\n    run()");
    const char *push = strstr(py, "torch.cuda.nvtx.range_push(\"profeed\")\noutput = run()");
    const char *pop = strstr(py, "torch.cuda.nvtx.range_pop()");
    cr_assert(warm && push && pop && warm < push && push < pop);
    cr_assert_not_null(strstr(py, "WARMUP = 3\n"));
    cr_assert_not_null(strstr(py, "inputs = [to_cuda(x) for x in problem.get_inputs()]"));
    free(py);
}

Test(wrapper, conv_kernel_taking_weight_gets_the_model_layers_weights)
{
    cr_assert_eq(s_detect("conv_kernel.py", "conv_problem.py"), WRAPPER_MODEL);
    char *py = s_render(WRAPPER_MODEL, "conv_kernel.py", "conv_problem.py");
    cr_assert_not_null(strstr(py, "model = problem.Model(*init_inputs).cuda().eval()"));
    cr_assert_not_null(strstr(py, "return kernel_function(inputs[0], layer.weight, layer.bias, **layer_args)"));
    cr_assert_null(strstr(py, "kernel_function(*inputs)"));
    free(py);
}

Test(wrapper, rmsnorm_kernel_gets_the_init_inputs_after_the_inputs)
{
    cr_assert_eq(s_detect("rmsnorm_kernel.py", "rmsnorm_problem.py"), WRAPPER_INIT_INPUTS);
    char *py = s_render(WRAPPER_INIT_INPUTS, "rmsnorm_kernel.py", "rmsnorm_problem.py");
    cr_assert_not_null(strstr(py, "    return kernel_function(*inputs, *init_inputs)"));
    free(py);
}

Test(wrapper, detection_reads_whole_words_and_the_first_return_of_get_init_inputs)
{
    cr_assert_eq(wrapper_detect("def kernel_function(x, weights):\n", "def get_init_inputs():\n    return []\n"),
                 WRAPPER_PLAIN, "weights is not weight");
    cr_assert_eq(wrapper_detect("def kernel_function(\n    x,\n    weight: torch.Tensor,\n):\n", ""), WRAPPER_MODEL);
    cr_assert_eq(wrapper_detect("def kernel_function(x):\n", "def get_init_inputs():\n    return [1024]  # dim\n"),
                 WRAPPER_INIT_INPUTS);
    cr_assert_eq(wrapper_detect("def kernel_function(x):\n", "def get_init_inputs():\n    return ()\n"), WRAPPER_PLAIN);
    cr_assert_eq(wrapper_detect("def kernel_function(x):\n", "def get_inputs():\n    return [x]\n"), WRAPPER_PLAIN,
                 "no get_init_inputs: nothing to pass");
    wrapper_case_t c;
    cr_assert_eq(wrapper_case_parse("init_inputs", &c), 0);
    cr_assert_eq(c, WRAPPER_INIT_INPUTS);
    cr_assert_eq(wrapper_case_parse("jinja", &c), -1);
}

Test(wrapper, file_names_cannot_break_out_of_their_python_literal)
{
    wrapper_params_t params = {
        .kernel_file = "k'); import os; os.system('x').py",
        .problem_file = "caf\xc3\xa9\\.py",
        .call = WRAPPER_PLAIN,
        .warmup = 1,
        .nvtx_range = "profeed",
    };
    pf_error_t err;
    char *py = wrapper_render(wrapper_template, wrapper_template_len, &params, &err);
    cr_assert_not_null(py, "%s", err.msg);
    cr_assert_not_null(strstr(py, "b'k\\x27); import os; os.system(\\x27x\\x27).py'"));
    cr_assert_not_null(strstr(py, "b'caf\\xc3\\xa9\\x5c.py'"));
    free(py);
}

Test(wrapper, bad_parameters_and_unknown_placeholders_are_refused)
{
    wrapper_params_t params = {.kernel_file = "k.py", .problem_file = "p.py", .warmup = 1, .nvtx_range = "a b"};
    pf_error_t err;
    cr_assert_null(wrapper_render(wrapper_template, wrapper_template_len, &params, &err));
    cr_assert_not_null(strstr(err.msg, "NVTX range"), "%s", err.msg);
    params.nvtx_range = "profeed";
    const char *tmpl = "x = @NOPE@\n";
    cr_assert_null(wrapper_render(tmpl, strlen(tmpl), &params, &err));
    cr_assert_not_null(strstr(err.msg, "unknown placeholder at byte 4"), "%s", err.msg);
    params.warmup = 1000;
    cr_assert_null(wrapper_render(wrapper_template, wrapper_template_len, &params, &err));
}

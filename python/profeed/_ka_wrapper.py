"""The program profeed.kernelagent.KernelProfiler profiles on this host:
KernelAgent's NCU wrapper in behaviour (three warm-up launches, then the
measured one, which ncu reaches with --launch-skip=3), for a kernel file that
defines kernel_function and a KernelBench problem file (Model, get_inputs(),
get_init_inputs()).

    python3 ncu_wrapper.py KERNEL_FILE PROBLEM_FILE

The call forms are those of the farm's wrapper
(collector/wrapper_template.py.in), chosen here at run time rather than
from the source text: `model` when kernel_function takes a `weight`
parameter (the first layer of Model(*init_inputs) with a weight tensor gives
it, its stride/padding/dilation/groups passed when accepted), `init_inputs`
when get_init_inputs() returns something (RMSNorm's features and eps), else
`plain`. The measured launch also runs inside the NVTX range "profeed", so
the same program serves a plan that filters by range.
"""

import importlib.util
import inspect
import os
import sys

WARMUP = 3
NVTX_RANGE = "profeed"


def load(name, path):
    """Imports a file by path: its name need not be a Python identifier."""
    path = os.path.abspath(path)
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        sys.exit(f"profeed wrapper: cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def make_run(torch, kernel_function, problem, inputs, init_inputs):
    """run(): one call of kernel_function in the form its signature asks for."""
    params = inspect.signature(kernel_function).parameters
    if "weight" in params:
        model = problem.Model(*init_inputs).cuda().eval()
        layer = next((m for m in model.modules() if isinstance(getattr(m, "weight", None), torch.Tensor)), None)
        if layer is None:
            sys.exit("profeed wrapper: Model has no layer with a weight tensor to pass to kernel_function")
        takes_any = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values())
        layer_args = {}
        for attr in ("stride", "padding", "dilation", "groups"):
            value = getattr(layer, attr, None)
            if value is None or isinstance(value, str) or not (takes_any or attr in params):
                continue
            layer_args[attr] = value[0] if isinstance(value, (tuple, list)) else value

        def run():
            with torch.no_grad():
                return kernel_function(inputs[0], layer.weight, layer.bias, **layer_args)
        return run, "model"
    if init_inputs:
        return (lambda: kernel_function(*inputs, *init_inputs)), "init_inputs"
    return (lambda: kernel_function(*inputs)), "plain"


def main(kernel_file, problem_file):
    import torch

    kernel = load("profeed_kernel", kernel_file)
    problem = load("profeed_problem", problem_file)

    def to_cuda(value):
        return value.cuda() if isinstance(value, torch.Tensor) and not value.is_cuda else value

    torch.manual_seed(0)
    inputs = [to_cuda(x) for x in problem.get_inputs()]
    init_inputs = list(problem.get_init_inputs()) if hasattr(problem, "get_init_inputs") else []
    run, form = make_run(torch, kernel.kernel_function, problem, inputs, init_inputs)
    for _ in range(WARMUP):
        run()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(NVTX_RANGE)
    output = run()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    shape = tuple(output.shape) if hasattr(output, "shape") else type(output).__name__
    print(f"profeed wrapper: kernel_function ran ({form}); output {shape}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: ncu_wrapper.py KERNEL_FILE PROBLEM_FILE")
    main(sys.argv[1], sys.argv[2])

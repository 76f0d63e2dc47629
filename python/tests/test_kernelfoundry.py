"""KernelFoundry-shaped calls give the feedback `profeed analyze` gives on the
same files: every NCU capture and every Intel fixture, passed in memory under
KernelFoundry's pass keys and file names."""

import json
import subprocess

import pytest

import profeed
from profeed import kernelfoundry as kf
from conftest import FIXTURES, profeed_command

B580 = "Intel Corporation Battlemage G21 [Arc B580] (rev 01)"
PVC = "Intel(R) Data Center GPU Max 1550"


def cli(paths, device=None, profiler=None, renames=()):
    """profeed analyze's text feedback on `paths`, "" where it found the
    input bad (exit 2: KernelFoundry's classes log that and give ""). A
    message that names its source names a file on disk by its path and a file
    in memory by pass and name; `renames` maps the one to the other."""
    cmd = [profeed_command(), "analyze"]
    if device:
        cmd += ["--device", device]
    if profiler:
        cmd += ["--profiler", profiler]
    done = subprocess.run(cmd + [str(p) for p in paths], capture_output=True, text=True, timeout=60)
    assert done.returncode in (0, 2, 3), done.stderr
    if done.returncode == 2:
        return ""
    out = done.stdout
    for on_disk, in_memory in renames:
        out = out.replace(on_disk, in_memory)
    return out


NCU_CAPTURES = sorted(p for p in (FIXTURES / "ncu").rglob("*.csv"))
NCU_ERRORS = sorted((FIXTURES / "ncu" / "h200").glob("err_*_stdout.txt"))


@pytest.mark.parametrize("path", NCU_CAPTURES + NCU_ERRORS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_ncu_capture_gives_the_feedback_of_profeed_analyze(path):
    outputs = {"ncu.000": {"ncu_report.csv": path.read_text(errors="surrogateescape")}}
    feedback_class = kf.get_profiler_feedback_class("cuda", "Hopper")
    assert feedback_class is kf.NCUProfilerFeedback
    collated, feedback = feedback_class().collate_and_create_feedback(outputs, {"gpu_name": ""})
    expected = cli([path], renames=[(str(path), "pass ncu.000: ncu_report.csv")])
    assert feedback == expected
    assert isinstance(collated, dict) and collated.get("profiler") == "ncu"
    if not expected:
        with pytest.raises(profeed.BadInput, match="pass ncu.000: ncu_report.csv"):
            profeed.analyze(outputs, {})


def test_ncu_two_passes_give_the_feedback_of_both_files():
    paths = [FIXTURES / "ncu/h200/full_raw.csv", FIXTURES / "ncu/h200/full_details.csv"]
    outputs = {f"ncu.{i:03d}": {"ncu_report.csv": p.read_text()} for i, p in enumerate(paths)}
    collated, feedback = kf.NCUProfilerFeedback().collate_and_create_feedback(outputs, {})
    assert feedback == cli(paths, renames=[(str(p), f"pass ncu.{i:03d}: ncu_report.csv")
                                           for i, p in enumerate(paths)])
    assert collated["status"] == "ok"
    assert "collated" not in collated, "per-launch data only when asked for"
    assert profeed.analyze(outputs, {}, launches=True)[0]["collated"]


def unitrace_outputs(folder):
    """KernelFoundry's Unitrace.read_output() per pass: the trace.* files by
    name and the parsed chrome timeline as "timeline"."""
    outputs = {}
    for i, metrics in enumerate(sorted(folder.glob("trace.metrics.*"))):
        pid = metrics.name.rsplit(".", 1)[1]
        files = {metrics.name: metrics.read_text()}
        for timeline in folder.glob(f"*.{pid}.json"):
            files["timeline"] = json.loads(timeline.read_text())
        outputs[f"unitrace.{i:03d}"] = files
    return outputs


def _unitrace_cases():
    """Every unitrace capture folder (unitrace_regress is a fuzz finding, not
    a capture): OCL sampling ones as KernelFoundry's OCL class reads them,
    the PVC one on its own GPU, the rest on the B580."""
    for folder in sorted(p.name for p in (FIXTURES / "intel").glob("unitrace_*") if p.is_dir()):
        if folder == "unitrace_regress":
            continue
        ocl = folder.startswith("unitrace_ocl")
        yield folder, "ocl" if ocl else "sycl", "unitrace", PVC if "pvc" in folder else B580


@pytest.mark.parametrize("folder,language,profiler_type,device", list(_unitrace_cases()))
def test_unitrace_fixture_gives_the_feedback_of_profeed_analyze(folder, language, profiler_type, device):
    path = FIXTURES / "intel" / folder
    feedback_class = kf.get_profiler_feedback_class(language, "bmg", profiler_type)
    assert feedback_class.name == "unitrace"
    collated, feedback = feedback_class().collate_and_create_feedback(
        unitrace_outputs(path), {"gpu_name": device, "cpu_info": "", "device_id": ""})
    assert feedback, "feedback expected"
    renames = []
    for i, metrics in enumerate(sorted(path.glob("trace.metrics.*"))):
        pid = metrics.name.rsplit(".", 1)[1]
        renames += [(str(metrics), f"pass unitrace.{i:03d}: {metrics.name}"), (f"pass pid {pid}", f"pass unitrace.{i:03d}")]
        renames += [(str(t), f"pass unitrace.{i:03d}: timeline") for t in path.glob(f"*.{pid}.json")]
    assert feedback == cli(sorted(p for p in path.iterdir()), device=device, renames=renames)
    assert collated["profiler"] == "unitrace"


def test_b580_in_memory_keeps_eight_kernels():
    """Issue 18: renamed temp files gave 4 kernels; names kept give 8."""
    _, feedback = profeed.analyze(unitrace_outputs(FIXTURES / "intel/unitrace_b580"), {"gpu_name": B580})
    assert "8 kernels" in feedback, feedback


@pytest.mark.parametrize("name", sorted(p.name for p in (FIXTURES / "intel/vtune").iterdir()))
def test_vtune_fixture_gives_the_feedback_of_profeed_analyze(name):
    path = FIXTURES / "intel/vtune" / name
    feedback_class = kf.get_profiler_feedback_class("ocl", "bmg")
    assert feedback_class is kf.VTuneProfilerFeedback
    outputs = {"vtune.000": {name: path.read_text()}}
    _, feedback = feedback_class().collate_and_create_feedback(outputs, {"gpu_name": B580})
    assert feedback == cli([path], device=B580, profiler="vtune", renames=[(str(path), f"pass vtune.000: {name}")])


def test_selection_table_is_kernelfoundrys():
    assert kf.get_profiler_feedback_class("SYCL", "bmg") is kf.UnitraceProfilerFeedback
    assert kf.get_profiler_feedback_class("ocl", "bmg") is kf.VTuneProfilerFeedback
    assert kf.get_profiler_feedback_class("ocl", "bmg", "Unitrace") is kf.OCLUnitraceProfilerFeedback
    assert kf.get_profiler_feedback_class("triton", "Hopper") is kf.NCUProfilerFeedback
    assert kf.get_profiler_feedback_class("pytorch", "bmg") is kf.UnitraceProfilerFeedback
    assert kf.get_profiler_feedback_class("sycl", "bmg", "vtune") is kf.VTuneProfilerFeedback
    assert [c().name for c in (kf.NCUProfilerFeedback, kf.UnitraceProfilerFeedback,
                               kf.OCLUnitraceProfilerFeedback, kf.VTuneProfilerFeedback)] == \
        ["ncu", "unitrace", "unitrace", "vtune"]


def test_unknown_language_or_profiler_raises_with_those_that_work():
    with pytest.raises(ValueError, match=r"Unknown profiler 'ncu' for language 'sycl'. "
                                         r"Available profilers for 'sycl': \['unitrace', 'vtune'\]"):
        kf.get_profiler_feedback_class("sycl", "bmg", "ncu")
    with pytest.raises(ValueError, match=r"for language 'fortran'"):
        kf.get_profiler_feedback_class("fortran", "bmg")


def test_reference_language():
    assert kf.get_reference_language_for_profiling({"language": "sycl"}) == "sycl"
    assert kf.get_reference_language_for_profiling(
        {"language": "sycl", "prompt": {"reference_language": "Pytorch"}}) == "sycl"
    assert kf.get_reference_language_for_profiling(
        {"language": "sycl", "prompt": {"reference_language": "cuda"}}) == "cuda"


def test_collate_then_create_is_collate_and_create():
    outputs = {"ncu.000": {"ncu_report.csv": (FIXTURES / "ncu/h200/full_raw.csv").read_text()},
               "unitrace.000": {"trace.metrics.1": "x"}}
    pf = kf.NCUProfilerFeedback()
    data = pf.collate_data(outputs)
    assert list(data["outputs"]) == ["ncu.000"], "only this profiler's passes"
    assert pf.create_feedback(data, {}) == pf.collate_and_create_feedback(outputs, {})[1]
    assert pf.collate_and_create_feedback({"vtune.000": {}}, {}) == ({}, "")


def test_analyze_files_is_the_package_s_own():
    """docs/python.md names profeed.analyze_files: the package exports it."""
    assert profeed.analyze_files is profeed.analysis.analyze_files

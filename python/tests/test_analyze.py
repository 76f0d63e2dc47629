"""profeed.analyze: in memory, typed errors for bad input, nothing written."""

import os

import pytest

import profeed
from profeed import _native, analysis
from conftest import FIXTURES

RAW = (FIXTURES / "ncu/h200/full_raw.csv").read_text()


def test_analyze_returns_collated_and_text():
    collated, feedback = profeed.analyze({"ncu.000": {"ncu_report.csv": RAW}}, {})
    assert feedback.startswith("profeed feedback")
    assert collated["status"] == "ok" and collated["profiler"] == "ncu"
    assert collated["kernels"], collated.keys()


def test_formats():
    _, js = profeed.analyze({"ncu.000": {"ncu_report.csv": RAW}}, {}, fmt="json")
    assert js.lstrip().startswith("{")
    _, md = profeed.analyze({"ncu.000": {"ncu_report.csv": RAW}}, {}, fmt="markdown")
    assert md.startswith("#")
    with pytest.raises(profeed.BadInput, match="fmt"):
        profeed.analyze({"ncu.000": {"ncu_report.csv": RAW}}, {}, fmt="yaml")


def test_a_text_budget_is_for_text_only():
    _, short = profeed.analyze({"ncu.000": {"ncu_report.csv": RAW}}, {}, max_chars=400)
    assert len(short) <= 400
    with pytest.raises(profeed.BadInput, match="never cut"):
        profeed.analyze({"ncu.000": {"ncu_report.csv": RAW}}, {}, fmt="json", max_chars=400)
    with pytest.raises(profeed.BadInput, match="too small"):
        profeed.analyze({"ncu.000": {"ncu_report.csv": RAW}}, {}, max_chars=10)


def test_a_token_budget_is_kept_and_checked():
    _, short = profeed.analyze({"ncu.000": {"ncu_report.csv": RAW}}, {}, max_tokens=120)
    _, full = profeed.analyze({"ncu.000": {"ncu_report.csv": RAW}}, {})
    assert len(short) < len(full)
    assert "left out to fit the length limit" in short or "cut to fit" in short, short
    with pytest.raises(profeed.BadInput, match="never cut"):
        profeed.analyze({"ncu.000": {"ncu_report.csv": RAW}}, {}, fmt="json", max_tokens=400)
    with pytest.raises(profeed.BadInput, match="at least 64 tokens"):
        profeed.analyze({"ncu.000": {"ncu_report.csv": RAW}}, {}, max_tokens=10)


def test_a_source_page_names_the_line():
    v2 = FIXTURES / "ncu/h200-v2"
    collated, _ = profeed.analyze({"ncu.000": {"full_raw.csv": (v2 / "full_raw.csv").read_text(),
                                               "full_details.csv": (v2 / "full_details.csv").read_text()},
                                   "ncu.001": {"source.csv": (v2 / "source_smem_stride4.csv").read_text()}},
                                  {}, fmt="json", min_share=0)
    conflicts = [f for k in collated["kernels"] for f in k["findings"] if f["category"] == "bank_conflicts"]
    assert conflicts and conflicts[0]["lines"][0]["line"] == 62, conflicts


def test_bytes_are_taken_as_text():
    a = profeed.analyze({"ncu.000": {"ncu_report.csv": RAW}}, {})[1]
    b = profeed.analyze({"ncu.000": {"ncu_report.csv": RAW.encode()}}, {})[1]
    assert a == b


@pytest.mark.parametrize("outputs,match", [
    ([("ncu.000", RAW)], "outputs: expected a dict"),
    ({}, "no passes"),
    ({"ncu.000": RAW}, r"outputs\['ncu.000'\]: expected a dict"),
    ({"ncu.000": {"ncu_report.csv": 42}}, r"content is int"),
    ({"ncu.000": {"ncu_report.csv": None}}, r"content is NoneType"),
    ({"ncu.000": {7: RAW}}, "file name"),
    ({3: {"a.csv": RAW}}, "pass key"),
    ({"unitrace.000": {"timeline": {"bad": {1, 2}}}}, "not JSON-serializable"),
])
def test_malformed_outputs_raise_bad_input_naming_it(outputs, match):
    with pytest.raises(profeed.BadInput, match=match):
        profeed.analyze(outputs, {})


def test_unknown_profiler():
    with pytest.raises(profeed.UnknownProfiler, match="rocprof"):
        profeed.analyze({"ncu.000": {"ncu_report.csv": RAW}}, {}, profiler="rocprof")
    assert issubclass(profeed.UnknownProfiler, profeed.BadInput)
    assert issubclass(profeed.BadInput, ValueError)


def test_oversized_pass_raises_too_big(monkeypatch):
    monkeypatch.setattr(_native, "FILE_MAX", 1000)
    with pytest.raises(profeed.TooBig, match=r"outputs\['ncu.000'\]\['ncu_report.csv'\]"):
        profeed.analyze({"ncu.000": {"ncu_report.csv": RAW}}, {})


def test_the_library_checks_sizes_too():
    """A wrong length never reaches past the bytes: the C side refuses it."""
    with _native.Session() as s:
        lib = _native.lib()
        rc = lib.profeed_session_add(s._h, b"ncu.000", b"x.csv", b"abc", _native.FILE_MAX + 1)
        assert rc == _native.BAD_INPUT
        assert "x.csv" in s.error()


def test_unreadable_content_is_bad_input_naming_pass_and_file():
    with pytest.raises(profeed.BadInput, match="pass unitrace.001: python3.7.json"):
        profeed.analyze({"unitrace.001": {"python3.7.json": '{"traceEvents": [{"name": '}}, {})


def test_worker_info_must_be_a_dict_of_strings():
    with pytest.raises(profeed.BadInput, match="worker_info"):
        profeed.analyze({"ncu.000": {"ncu_report.csv": RAW}}, "H200")
    with pytest.raises(profeed.BadInput, match="gpu_name"):
        profeed.analyze({"ncu.000": {"ncu_report.csv": RAW}}, {"gpu_name": 5})


def test_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    profeed.analyze({"ncu.000": {"ncu_report.csv": RAW}}, {})
    assert os.listdir(tmp_path) == []


def test_library_comes_from_the_installation():
    lib_path = _native._candidates()[0]
    assert os.environ["PROFEED_TEST_ROOT"] in lib_path
    assert os.path.exists(lib_path)


def test_a_baseline_opens_the_feedback_with_the_change():
    before = {"ncu.000": {"ncu_report.csv": (FIXTURES / "ncu/h200-v2/core_raw.csv").read_text()}}
    after = {"ncu.000": {"ncu_report.csv": (FIXTURES / "ncu/h200-v2/capture-2026-12-01/core_raw.csv").read_text()}}
    collated, text = profeed.analyze(after, {}, baseline=before, stop_within=1.2)
    assert "Change since baseline files ncu_report.csv: within noise" in text, text[:600]
    comparison = collated["comparison"]
    assert comparison["problem"] is None and len(comparison["kernels"]) == 5, comparison
    assert collated["manifest"]["profeed_version"], collated["manifest"]
    _, plain = profeed.analyze(after, {})
    assert "Change since" not in plain
    collated, text = analysis.analyze_files([str(FIXTURES / "ncu/h200-v2/capture-2026-12-01/core_raw.csv")],
                                           baseline=[str(FIXTURES / "ncu/h200-v2/no-such.csv")])
    assert "not compared: its files could not be analyzed" in text, text[:600]
    assert collated["kernels"], "the plain feedback stays"


def test_a_folder_stands_for_its_files(tmp_path):
    folder = FIXTURES / "intel/unitrace_ocl_sampling_slm"
    collated, text = analysis.analyze_files([str(folder)])
    files, _ = analysis.analyze_files(sorted(str(p) for p in folder.iterdir()))
    assert collated["kernels"] == files["kernels"] and "slm_tile_reduce" in text, text[:400]
    with pytest.raises(profeed.BadInput, match="a folder with no file in it"):
        analysis.analyze_files([str(tmp_path)])


def test_the_mcp_tool_takes_baseline_files():
    import io
    from profeed import mcp
    server = mcp.Server("ipc:///nonexistent", io.BytesIO())
    text, collated = server.analyze_profile(
        {"files": [str(FIXTURES / "ncu/h200-v2/capture-2026-12-01/core_raw.csv")],
         "baseline_files": [str(FIXTURES / "ncu/h200-v2/core_raw.csv")]}, None)
    assert "Change since baseline files " in text and collated["comparison"]["kernels"], text[:400]
    with pytest.raises(mcp.ToolError, match="baseline_files"):
        server.analyze_profile({"content": [{"name": "a.csv", "text": "x"}], "baseline_files": ["b.csv"]}, None)

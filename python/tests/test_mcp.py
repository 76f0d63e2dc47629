"""`profeed mcp` with the official MCP client (@modelcontextprotocol/sdk from
npm, run by node): initialize, tools/list, tools/call of each tool, progress
notifications, tool errors. The SDK is installed once into the build tree
(mcp-node/); when npm cannot reach its registry the test fails saying so."""

import json
import os
import shutil
import subprocess

import pytest

from conftest import BUILD, FIXTURES, profeed_command
from test_farm import farm_procs  # noqa: F401  (the fixture)

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_DIR = BUILD / "mcp-node"
SDK = "@modelcontextprotocol/sdk"


def _install_sdk() -> None:
    if (NODE_DIR / "node_modules" / SDK / "package.json").exists():
        return
    for tool in ("node", "npm"):
        if not shutil.which(tool):
            pytest.fail(f"{tool} is not installed: run deploy/install-deps.sh (nodejs, npm)")
    NODE_DIR.mkdir(exist_ok=True)
    (NODE_DIR / "package.json").write_text(json.dumps(
        {"name": "profeed-mcp-test", "private": True, "type": "module", "dependencies": {SDK: "^1.32.0"}}))
    cmd = ["npm", "install", "--no-audit", "--no-fund", "--fetch-retries=1", "--fetch-timeout=30000"]
    try:
        done = subprocess.run(cmd, cwd=NODE_DIR, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.fail(f"npm install {SDK} did not finish in 300 s: is the npm registry reachable from here?")
    if done.returncode != 0:
        pytest.fail(f"npm could not install {SDK} (is the registry reachable?): {done.stderr[-2000:]}")


def test_official_client_initializes_lists_and_calls(farm_procs):  # noqa: F811
    _install_sdk()
    shutil.copy(os.path.join(HERE, "mcp_client.mjs"), NODE_DIR / "mcp_client.mjs")
    raw = FIXTURES / "ncu/h200/full_raw.csv"
    done = subprocess.run(["node", str(NODE_DIR / "mcp_client.mjs"), profeed_command(), farm_procs.agents, str(raw)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.splitlines()[-1])

    assert seen["server"]["name"] == "profeed"
    assert "tools" in seen["capabilities"]
    tools = {t["name"]: t["schema"] for t in seen["tools"]}
    assert set(tools) == {"analyze_profile", "submit_job", "farm_status"}
    assert tools["analyze_profile"]["type"] == "object" and "files" in tools["analyze_profile"]["properties"]

    expected = subprocess.run([profeed_command(), "analyze", str(raw)], capture_output=True, text=True).stdout
    a = seen["analyze_files"]
    assert a["isError"] is False and a["content"][0]["text"] == expected
    assert a["structuredContent"]["status"] == "ok"

    inline = seen["analyze_inline"]
    assert inline["isError"] is False
    assert json.loads(inline["content"][0]["text"])["kernels"] == inline["structuredContent"]["kernels"]

    assert seen["analyze_bad"]["isError"] is True and "rocprof" in seen["analyze_bad"]["content"][0]["text"]
    assert seen["analyze_missing"]["isError"] is True
    assert "/nonexistent/raw.csv" in seen["analyze_missing"]["content"][0]["text"]

    sub = seen["submit"]
    assert sub.get("isError") is False, sub
    assert sub["structuredContent"]["status"] == "ok" and sub["structuredContent"]["job_id"]
    assert "profeed feedback" in sub["content"][0]["text"]
    assert seen["progress"], "progress notifications reached the client"
    assert [p["progress"] for p in seen["progress"]] == sorted(p["progress"] for p in seen["progress"])

    assert seen["status"]["isError"] is False and "workers: 2" in seen["status"]["content"][0]["text"]
    assert seen["status_dead"]["isError"] is True
    assert "no answer from the broker" in seen["status_dead"]["content"][0]["text"]
    assert "thrown" in seen["unknown_tool"] and "no_such_tool" in seen["unknown_tool"]["thrown"]

"""`tether export --format rerun|mcap`: the files read back with rerun's and mcap's own readers."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from mcap.reader import make_reader
from rerun.chunk import RrdReader
from typer.testing import CliRunner

from tests.replay.recorded import record_pick_place
from tether.cli.main import app
from tether.errors import TetherError
from tether.replay.export import export_run
from tether.replay.trace import TraceFile, read_trace


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, list[dict]]:
    run_dir, result = record_pick_place(tmp_path_factory.mktemp("export") / "run", frame_every=5)
    assert result.success
    return run_dir, read_trace(run_dir)


def ticks_of(records: list[dict]) -> list[dict]:
    return [r for r in records if r["k"] == "tick"]


def rerun_rows(path: Path) -> dict[str, list[dict]]:
    """Every row on the timelines of a .rrd by entity path, as rerun's reader gives them, in
    the order they were logged (row ids grow with time; chunks may come in any order)."""
    rows: dict[str, list[dict]] = {}
    for chunk in RrdReader(path).stream():
        if not chunk.is_static:
            rows.setdefault(chunk.entity_path, []).extend(chunk.to_record_batch().to_pylist())
    return {entity: sorted(logged, key=lambda row: row["rerun.controls.RowId"])
            for entity, logged in rows.items()}


def mcap_messages(path: Path) -> dict[str, list[dict]]:
    """Every message of an MCAP file by topic, decoded from JSON, with its log time."""
    topics: dict[str, list[dict]] = {}
    with path.open("rb") as stream:
        for schema, channel, message in make_reader(stream).iter_messages():
            assert schema.encoding == "jsonschema" and channel.message_encoding == "json"
            topics.setdefault(channel.topic, []).append(
                {**json.loads(message.data), "_ns": message.log_time})
    return topics


def test_the_rerun_export_holds_ticks_poses_frames_and_errors(run, tmp_path: Path):
    run_dir, records = run
    ticks = ticks_of(records)
    out = tmp_path / "run.rrd"
    assert export_run(run_dir, out, "rerun").name == "rerun"
    rows = rerun_rows(out)
    root = rows["/tree/root"]
    assert [r["tick"] for r in root] == [t["t"] for t in ticks]
    assert root[-1]["Scalars:scalars"] == [1.0]  # SUCCESS
    tick = ticks[40]
    eef = next(r for r in rows["/robot/eef"] if r["tick"] == tick["t"])
    assert eef["Transform3D:translation"] == [pytest.approx(tick["eef"][:3])]
    assert eef["Transform3D:quaternion"] == [pytest.approx(tick["eef"][3:])]
    grip = next(r for r in rows["/robot/gripper"] if r["tick"] == tick["t"])
    assert grip["Scalars:scalars"] == [pytest.approx(tick["grip"])]
    framed = [t["t"] for t in ticks if "frames" in t]
    assert [r["tick"] for r in rows["/camera/top"]] == framed
    first = (run_dir / ticks[0]["frames"]["top"]).read_bytes()
    assert bytes(rows["/camera/top"][0]["EncodedImage:blob"][0]) == first
    errors = [r for r in rows["/events"] if r["TextLog:text"][0].startswith("error ")]
    assert [r["tick"] for r in errors] == [t["t"] for t in ticks for e in t.get("events", [])
                                           if e["kind"] == "error"]
    assert errors[0]["TextLog:level"] == ["ERROR"]
    assert "code=EMPTY_GRASP" in errors[0]["TextLog:text"][0]
    commands = [t for t in ticks if "cmd" in t]
    assert len(rows["/command/action"]) == len(commands)
    written = [t["t"] for t in ticks if "/errors/last" in t.get("bb", {})]
    assert [r["tick"] for r in rows["/blackboard/errors/last"]] == written


def test_the_mcap_export_holds_ticks_poses_frames_and_errors(run, tmp_path: Path):
    run_dir, records = run
    ticks = ticks_of(records)
    out = tmp_path / "run.mcap"
    export_run(run_dir, out)  # the format from the suffix
    topics = mcap_messages(out)
    assert [m["t"] for m in topics["/tree/tick"]] == [t["t"] for t in ticks]
    assert [m["_ns"] for m in topics["/tree/tick"]] == [round(t["sim"] * 1e9) for t in ticks]
    tick = ticks[40]
    pose = topics["/robot/eef"][40]["pose"]
    assert [pose["position"][k] for k in "xyz"] == tick["eef"][:3]
    assert [pose["orientation"][k] for k in "xyzw"] == tick["eef"][3:]
    assert topics["/robot/gripper"][40] == {"t": tick["t"], "width": tick["grip"],
                                           "_ns": round(tick["sim"] * 1e9)}
    frames = topics["/camera/top"]
    assert len(frames) == sum("frames" in t for t in ticks)
    assert base64.b64decode(frames[0]["data"]) == (run_dir / ticks[0]["frames"]["top"]).read_bytes()
    errors = [m for m in topics["/events"] if m["name"] == "error"]
    assert [m["level"] for m in errors] == [4, 4]
    assert "EMPTY_GRASP" in errors[0]["message"]
    assert [m["line"] for m in errors] == [t["t"] for t in ticks for e in t.get("events", [])
                                          if e["kind"] == "error"]
    assert len(topics["/command"]) == sum("cmd" in t for t in ticks)
    assert topics["/run"][0]["end"]["success"] is True


def vla_run(run_dir: Path) -> Path:
    """A two-tick trace whose `vla` leaf receives a chunk of two actions and deletes a key."""
    run_dir.mkdir()
    chunk = [[0.1, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0], [0.2, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0]]
    with TraceFile(run_dir / "trace.jsonl") as trace:
        trace.write({"k": "header", "format": "tether-trace/1", "control_dt": 0.05})
        trace.write({"k": "tree", "nodes": [{"id": 0, "parent": None, "name": "vla grasp_act",
                                             "type": "vla", "class": "VLA"}]})
        trace.write({"k": "tick", "t": 1, "step": 1, "sim": 0.05, "root": "RUNNING",
                     "changes": {"0": ["RUNNING", "chunk 1"]}, "bb": {"/user/x": 1},
                     "cmd": {"by": "vla grasp_act", "a": chunk[0]},
                     "events": [{"kind": "vla_chunk", "node": "vla grasp_act", "size": 2,
                                 "chunk": 1, "instruction": "pick", "actions": chunk}]})
        trace.write({"k": "tick", "t": 2, "step": 2, "sim": 0.1, "root": "FAILURE",
                     "changes": {"0": ["FAILURE", "STUCK"]}, "bb_del": ["/user/x"]})
    return run_dir


def test_a_vla_chunk_and_a_deleted_key_are_exported(tmp_path: Path):
    run_dir = vla_run(tmp_path / "run")
    export_run(run_dir, tmp_path / "run.rrd")
    rows = rerun_rows(tmp_path / "run.rrd")
    tensor = rows["/vla/vla\\ grasp_act"][0]
    assert tensor["tick"] == 1
    assert [row[0] for row in [tensor["Tensor:data"][0]["buffer"][i * 7:i * 7 + 1]
                               for i in range(2)]] == pytest.approx([0.1, 0.2])
    assert [r["TextLog:text"] for r in rows["/blackboard/user/x"]] == [["1"], ["(deleted)"]]
    texts = [r["TextLog:text"] for r in rows["/tree/nodes/0"] if r.get("TextLog:text")]
    assert texts == [["RUNNING vla grasp_act: chunk 1"], ["FAILURE vla grasp_act: STUCK"]]
    export_run(run_dir, tmp_path / "run.mcap")
    topics = mcap_messages(tmp_path / "run.mcap")
    assert topics["/vla/chunk"][0]["actions"] == json.loads(
        (run_dir / "trace.jsonl").read_text().splitlines()[2])["events"][0]["actions"]
    assert [m["deleted"] for m in topics["/blackboard"]] == [False, True]


def test_an_unknown_format_or_suffix_and_a_missing_trace_are_user_errors(tmp_path: Path):
    with pytest.raises(TetherError, match="unknown export format 'rerum' \\(did you mean "
                                          "'rerun'\\?\\)"):
        export_run(tmp_path, tmp_path / "x.rrd", "rerum")
    with pytest.raises(TetherError, match="x.zip: give --format \\(html, mcap, rerun\\) or a "
                                          "file ending in .html, .mcap, .rrd"):
        export_run(tmp_path, tmp_path / "x.zip")
    result = CliRunner().invoke(app, ["export", str(tmp_path), "-o", str(tmp_path / "x.mcap")])
    assert result.exit_code == 2
    assert "no trace at" in result.output
    assert not (tmp_path / "x.mcap").exists()

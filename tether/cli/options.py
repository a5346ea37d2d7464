"""What several `tether` verbs share: the two consoles, typed options, `--with` bindings, the
policies a run adds (`--policy`, `--policies`, `--device`), and the chat-model settings
(`--model`, `--base-url`, `--api-key`, `--timeout`) turned into services, and the verb's own
command line rebuilt for what it writes (`command_line`).

Verbs print results on `out` (stdout) and warnings on `err` (stderr); errors are printed once, by
the error boundary in `tether.cli.main`. An option used by more than one verb is declared here
once, as an `Annotated` type, so its flag and help read the same everywhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

if TYPE_CHECKING:
    from tether.behaviours.services import Services
    from tether.models.chat import BackendConfig
    from tether.models.policies import Entry

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

WithOpt = Annotated[list[str] | None, typer.Option(
    "--with", "-w", metavar="KEY=VALUE",
    help="Bind a tree parameter (repeatable); overrides what the task's goal binds.")]
TaskOpt = Annotated[str, typer.Option(
    "--task", "-t", metavar="SUITE/TASK",
    help="A task as SUITE/TASK_NAME, SUITE/INDEX or a .bddl file (see `tether scenes list`).")]
PerturbOpt = Annotated[list[str] | None, typer.Option(
    "--perturb", "-p", metavar="KIND[:k=v,...]",
    help="Apply a perturbation (repeatable, applied in order; see `tether scenes list`).")]
PolicyOpt = Annotated[list[str] | None, typer.Option(
    "--policy", metavar="NAME=SPEC",
    help="Name a policy for the trees' `vla` leaves (repeatable). SPEC: a lerobot checkpoint "
         "folder, an openpi server ws://HOST:PORT, a known policy's name, or a hub id "
         "OWNER/NAME (cached, or fetched when online).")]
PoliciesOpt = Annotated[Path | None, typer.Option(
    "--policies", metavar="FILE", help="A YAML file of named policies: `NAME: SPEC` or "
    "`NAME: {type: lerobot|openpi|scripted, ...}` (docs/policies.md).")]
DeviceOpt = Annotated[str | None, typer.Option(
    metavar="cpu|cuda|mps", help="Where the lerobot policies given by --policy/--policies (or "
    "the suite) run, unless they name a device (default: cpu).")]
PerceptionOpt = Annotated[str, typer.Option(
    "--perception", metavar="privileged|camera", help="What the leaves read object state from: "
    "the simulator's poses (privileged, the oracle) or the cameras only (camera: the project's "
    "segmenter on RGB-D; docs/perception.md).")]
UntilGoalOpt = Annotated[bool, typer.Option(
    "--until-goal/--until-tree", help="End the episode at the first step the task's goal holds "
    "(LIBERO's evaluation protocol), or when the tree finishes (default).")]
RecordDatasetOpt = Annotated[Path | None, typer.Option(
    "--record-dataset", metavar="DIR", help="Append each episode (both cameras, state, the "
    "commands sent, instruction, the commanding node, success) to the LeRobotDataset at DIR "
    "(created when missing; docs/policies.md).")]

Model = Annotated[str, typer.Option(help="openai: the served model name; transformers: a "
                                         "checkpoint directory.")]
BaseUrl = Annotated[str, typer.Option(help="openai: the server's /v1 URL.")]
ApiKey = Annotated[str | None, typer.Option(
    metavar="KEY", show_default=False,
    help="openai: the key sent as `Authorization: Bearer KEY` (default: $OPENAI_API_KEY, else "
         "EMPTY, which a vLLM server started without --api-key accepts).")]
Timeout = Annotated[float, typer.Option(help="openai: seconds per request.")]
Verifier = Annotated[str, typer.Option(
    metavar="sim|vlm", help="Who judges the expected effects (`verify`/`monitor` nodes with "
    "verifier auto): sim (the sim's predicates) or vlm (a VLM asked about the agentview image, "
    "behind --verifier-backend with --base-url/--model/--timeout).")]
VerifierBackend = Annotated[str | None, typer.Option(
    metavar="openai|transformers", help="The VLM verifier's chat backend (default: --backend "
    "when it is one).")]
DiagnoserOpt = Annotated[str, typer.Option(
    "--diagnoser", metavar="rules|llm", help="Who diagnoses a failed episode for memory: rules "
    "(by error code) or llm (an LLM behind --verifier-backend with --base-url/--model/--timeout;"
    " an unusable reply falls back to the rules).")]


def bindings(pairs: list[str] | None) -> dict[str, Any]:
    """The `--with KEY=VALUE` options as tree parameters."""
    from tether.trees.compiler import parse_binding

    return dict(parse_binding(p) for p in pairs or [])


def policies_from(specs: list[str] | None, file: Path | None, device: str | None
                  ) -> dict[str, Entry]:
    """The policies `--policy`, `--policies` and `--device` add to a run."""
    from tether.models.policies import PolicyOptions, resolve_policies

    return resolve_policies(PolicyOptions(tuple(specs or ()), file, device))


def chat_config(model: str, base_url: str, api_key: str | None, timeout: float,
                max_tokens: int = 1024) -> BackendConfig:
    """The chat backend settings the options give (`--api-key` unset: the environment's key)."""
    from tether.models.chat import BackendConfig, default_api_key

    return BackendConfig(model=model, base_url=base_url, api_key=api_key or default_api_key(),
                         timeout=timeout, max_tokens=max_tokens)


def services_for(verifier: str, diagnoser: str, backend: str, chat: BackendConfig) -> Services:
    """The run's services for `--verifier` and `--diagnoser` (`tether run` and `tether do`)."""
    from tether.session.services import ServicesConfig, open_services

    return open_services(ServicesConfig(verifier=verifier, diagnoser=diagnoser, backend=backend,
                                        chat=chat))


def command_line(ctx: typer.Context) -> str:
    """The running verb as `tether VERB ARGS --OPTION VALUE ...`: the arguments and the options
    given on the command line, rebuilt from the parsed values (not `sys.argv`, which is another
    program's when the verb is invoked from Python)."""
    import shlex

    words = ["tether", ctx.info_name or ""]
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name) if param.name else None
        if source is None or source.name != "COMMANDLINE":
            continue
        value = ctx.params[param.name]
        values = value if isinstance(value, (list, tuple)) else [value]
        if param.param_type_name == "argument":
            words += [str(v) for v in values]
        elif getattr(param, "is_flag", False):
            words.append(param.opts[0] if value else (param.secondary_opts or param.opts)[0])
        else:
            words += [w for v in values for w in (param.opts[0], str(v))]
    return " ".join(shlex.quote(w) for w in words)

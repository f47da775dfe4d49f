"""The tools the scripted model calls over the wire: those the *client* declared in its request.

A real agent executes every tool_use we send, so what we call must be safe by default:

1. A generated script calls only tools the request's `tools` declare. Each declared tool is
   callable with inputs from one source, first that applies:
   - the built-in read-only set (`SAFE_INPUTS`) for the common coding-agent tools (Bash, Read,
     Glob, Grep, LS): harmless commands and reads inside the client's working directory. Read's
     `file_path` must be absolute, so Read is callable only when the server knows that
     directory (`client_dir`, which `toolturn probe` gives);
   - with `schema_inputs` on (off by default): the scenario's own tool of that name (its
     examples, or inputs generated from its schema), else inputs generated from the client's
     `input_schema`. Such inputs may write files or run anything: for agents in a sandbox.
   A built-in input the client's schema refuses is dropped; a tool left with none is not called.
2. Weights: a callable tool keeps the scenario's `tool_mix` weight; a client's own twin of a
   scenario tool (`TWINS`: Codex CLI's shell `exec_command` for Bash, Qwen Code's
   `run_shell_command`, `read_file`, `glob`, `grep_search`) takes that tool's; one the
   mix does not name gets the mix's mean weight (1 if the mix is empty). A request with no
   callable tool gets final answers only (text, no tool calls).
3. Invalid inputs (the `invalid_tool_input` fault) break the client's own schema: a required
   field dropped, a value of the wrong type. They fail validation in the client, harmlessly.
4. An explicit script's calls are sent as scripted (its author chose names and inputs), with
   `{dir}` in an input replaced by the client's working directory when it is known; a call to a
   tool the client does not declare goes to its twin when it declares one
   (`toolturn.wire.tool_twins`: Codex CLI's shell for Bash and Read), its input translated;
   only the invalid-input fault draws from the client's tools as above.
5. One model per distinct tool list, kept for the `MODELS_KEPT` lists seen most recently: the
   model's draws depend on the scenario, the seed, the turn and the callable tools only.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from toolturn.distributions import fixed_ms
from toolturn.model.config import ExplicitScript, GeneratedScript, LatencyConfig, ProfileName
from toolturn.model.model import MockModel
from toolturn.model.tool_inputs import SpecInputs
from toolturn.tools.spec import ToolSpec
from toolturn.wire.tool_twins import TWINS, played_by

MODELS_KEPT = 32
DIR = "{dir}"  # replaced by the client's working directory

# Read-only inputs for tools coding agents commonly declare (rule 1). Paths stay inside the
# working directory: relative, or under DIR.
SAFE_INPUTS: dict[str, list[dict[str, Any]]] = {
    "Bash": [
        {"command": "ls", "description": "List files in current directory"},
        {"command": "ls -la", "description": "List all files with details"},
        {"command": "pwd", "description": "Print working directory"},
        {"command": "echo toolturn-sim", "description": "Print a word"},
        {"command": "wc -l README.md", "description": "Count lines of the README"},
    ],
    "Read": [{"file_path": f"{DIR}/README.md"}, {"file_path": f"{DIR}/src/app.py"}],
    "Glob": [{"pattern": "*"}, {"pattern": "**/*.py"}, {"pattern": "*.md"}],
    "Grep": [
        {"pattern": "TODO"},
        {"pattern": "def ", "output_mode": "files_with_matches"},
        {"pattern": "import", "output_mode": "count"},
    ],
    "LS": [{"path": DIR}],
    # Codex CLI's shell (`exec_command`, `cmd` a shell command line), and its older `shell`
    # (`command` an argv): the same harmless commands as Bash's.
    "exec_command": [{"cmd": "ls"}, {"cmd": "ls -la"}, {"cmd": "pwd"},
                     {"cmd": "echo toolturn-sim"}, {"cmd": "wc -l README.md"}],
    "shell": [{"command": ["ls"]}, {"command": ["ls", "-la"]}, {"command": ["pwd"]},
              {"command": ["echo", "toolturn-sim"]}],
    # Qwen Code's (a Chat Completions agent): its shell, reads, globs and searches.
    "run_shell_command": [{"command": "ls"}, {"command": "ls -la"}, {"command": "pwd"},
                          {"command": "echo toolturn-sim"}, {"command": "wc -l README.md"}],
    "read_file": [{"file_path": f"{DIR}/README.md"}, {"file_path": f"{DIR}/src/app.py"}],
    "glob": [{"pattern": "*"}, {"pattern": "**/*.py"}, {"pattern": "*.md"}],
    "grep_search": [{"pattern": "TODO"}, {"pattern": "def "}, {"pattern": "import"}],
}



@dataclass(frozen=True, slots=True)
class ClientTools:
    """How declared tools become callable (rule 1): the server's settings."""

    # The scenario's tools by name (its `tool_specs`), used with `schema_inputs` on.
    scenario: Mapping[str, ToolSpec]
    schema_inputs: bool = False
    client_dir: str | None = None


def _spec(name: str, schema: Any, examples: list[dict[str, Any]]) -> ToolSpec | None:
    """A tool of the client's schema with these examples; None if it cannot be one."""
    try:
        return ToolSpec.model_validate({
            "name": name, "input_schema": schema, "examples": examples,
            "duration": fixed_ms(0),
        })
    except (ValidationError, ValueError, TypeError):
        return None


def _safe_spec(name: str, schema: Any, client_dir: str | None) -> ToolSpec | None:
    inputs = []
    for example in SAFE_INPUTS[name]:
        text = json.dumps(example)
        if DIR in text:
            if client_dir is None:
                continue
            text = text.replace(DIR, client_dir.replace("\\", "\\\\").replace('"', '\\"'))
        inputs.append(json.loads(text))
    kept = [one for one in inputs if (spec := _spec(name, schema, [one])) is not None
            and spec.input_problem(one) is None]
    return _spec(name, schema, kept) if kept else None


def callable_tools(declared: Any, settings: ClientTools) -> dict[str, SpecInputs]:
    """The client's tools the model may call, with their input sources (rule 1)."""
    tools: dict[str, SpecInputs] = {}
    for tool in declared if isinstance(declared, list) else ():
        if not isinstance(tool, dict) or tool.get("type", "custom") != "custom":
            continue  # a server tool (web search, ...): the API runs those, not the client
        name, schema = tool.get("name"), tool.get("input_schema")
        if not isinstance(name, str):
            continue
        spec: ToolSpec | None = None
        if name in SAFE_INPUTS:
            spec = _safe_spec(name, schema, settings.client_dir)
        elif settings.schema_inputs:
            known = settings.scenario.get(name)
            spec = known if known is not None else _spec(name, schema, [])
        if spec is not None:
            tools[name] = SpecInputs(spec)
    return tools


def _in_dir(script: ExplicitScript, client_dir: str) -> ExplicitScript:
    """The script with `{dir}` in its tool inputs replaced by `client_dir` (rule 4)."""
    escaped = json.dumps(client_dir)[1:-1]
    text = script.model_dump_json().replace(DIR, escaped)
    return ExplicitScript.model_validate_json(text)


def declared_names(declared: Any) -> set[str]:
    """The names of the client tools a request declares (server tools left out)."""
    return {tool["name"] for tool in declared if isinstance(tool, dict)
            and tool.get("type", "custom") == "custom" and isinstance(tool.get("name"), str)
            } if isinstance(declared, list) else set()


def _with_twins(script: ExplicitScript, names: set[str]) -> ExplicitScript:
    """The script with each call to an undeclared tool sent to its declared twin (rule 4)."""
    data = script.model_dump()
    for response in data["responses"]:
        for block in response["blocks"]:
            if block["type"] == "tool_use":
                block["name"], block["input"] = played_by(block["name"], block["input"], names)
    changed = ExplicitScript.model_validate(data)
    return script if changed == script else changed


def _weights(mix: Mapping[str, float], names: list[str]) -> dict[str, float]:
    mean = sum(mix.values()) / len(mix) if mix else 1.0
    return {name: float(mix.get(name, mix.get(TWINS.get(name, name), mean))) for name in names}


class ClientToolModels:
    """The mock model for each request: for its declared tools (rules 2, 5; with no settings,
    the scenario's own tools, as in the simulator) and for the latency preset its model name
    maps to (`toolturn.wire.side_endpoints`; None: the scenario's own)."""

    def __init__(self, model: MockModel, settings: ClientTools | None) -> None:
        self._base = model
        self._settings = settings
        self._models: OrderedDict[tuple[str, str | None], MockModel] = OrderedDict()

    def for_request(self, body: Mapping[str, Any], profile: ProfileName | None = None
                    ) -> MockModel:
        if self._settings is None and profile is None:
            return self._base
        declared = body.get("tools") if self._settings is not None else None
        key = (hashlib.blake2b(
            json.dumps(declared, sort_keys=True, default=str).encode("utf-8", "surrogatepass"),
            digest_size=16,
        ).hexdigest(), profile)
        model = self._models.pop(key, None)
        if model is None:
            model = self._build(declared, profile)
        self._models[key] = model
        if len(self._models) > MODELS_KEPT:
            self._models.popitem(last=False)
        return model

    def _build(self, declared: Any, profile: ProfileName | None) -> MockModel:
        config = self._base.config
        if profile is not None:  # the preset's latencies: the scenario's overrides are its own
            config = config.model_copy(update={"profile": profile, "latency": LatencyConfig(),
                                               "name": None})
        if self._settings is None:
            return MockModel(config, self._base.root_seed, self._base.tools)
        tools = callable_tools(declared, self._settings)
        script = config.script
        if isinstance(script, GeneratedScript):
            weights = _weights(script.tool_mix, sorted(tools))
            update: dict[str, Any] = {"tool_mix": weights}
            if sum(weights.values()) <= 0:  # nothing to call, or nothing the mix would draw
                update = {"tool_mix": {}, "end_probability": 1.0}
                tools = {}
            config = config.model_copy(update={"script": script.model_copy(update=update)})
        else:
            if self._settings.client_dir is not None:
                script = _in_dir(script, self._settings.client_dir)
            script = _with_twins(script, declared_names(declared))
            config = config.model_copy(update={"script": script})
        return MockModel(config, self._base.root_seed, tools)

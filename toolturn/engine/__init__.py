"""The simulator: simpy drives the real runtime (`toolturn.runtime`) under load, in virtual time.

One module per concept:

- `arrivals`      when sessions are due (closed loop, Poisson or trace open loop)
- `clock`         simpy's environment with integer nanosecond time
- `draws`         every random draw of a session, keyed for common random numbers
- `endpoint`      the model endpoint's slots and queue in simulated time
- `feed_points`   where a response stream needs simulated time of its own
- `loop_factory`  the `ToolTurnLoop` under test, built from the scenario
- `tool_run`      one simulated tool call played back by timeouts
- `session`       one session: a user, a loop, and the commands it hands out, put together
                  from its parts:
- `session_state` what the parts of a session share, and the guards of its callbacks
- `request_path`  a request from endpoint admission to its stream's end
- `tool_calls`    a session's tool calls and permission answers
- `user_hooks`    the simulated user's interrupts and attachments
- `request_log`   what the engine knows of one request beyond the runtime's record
- `recorder`      a finished session turned into metric rows
- `event_trace`   every stream event fed, when a trace is asked for
- `context`       what the sessions of one simulation share
- `stopped_session` what the exceptions that stop a session carry
- `strict`        strict mode's stop
- `simulation`    one policy at one load level
- `plan`          a run's simulations and the tasks they are cut into, in the tables' order
- `task`          one task simulated into its parts folder; its counters and its failures
- `unit_progress` sessions finished per simulation, summed over its tasks
- `batch`         the tasks a backend is given, and where their results go
- `backends`      where the tasks run: `local` worker processes, a `dask` or `ray` cluster
- `interrupts`    a Ctrl-C held back while a cluster starts
- `forking`       worker processes forked from a forkserver with SIGINT blocked
- `runner`        every task of a run's plan on a backend; the run's result
- `collector`     the garbage collector run less often while simulating
"""

# The modules the rest of toolturn imports (tests/house/test_package_api.py holds every import from
# outside the package to them); the others are its own.
__all__ = [
    "arrivals", "backends", "collector", "draws", "loop_factory", "recorder", "runner",
    "session_faults", "simulation", "strict",
]

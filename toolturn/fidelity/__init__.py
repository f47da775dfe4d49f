"""Is the simulator true? A scenario run live (the same loops, user and draws over the official
SDK against `toolturn serve`, in real time), its turns paired with their simulated twins, and the
error per metric and per hop."""

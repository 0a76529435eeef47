"""The job system in one place: the persisted queue (`queue`), what each kind of job does (`kinds`),
the sweeps that find due work (`sweeps`), the workers (`worker`) and their child process
(`process`), and `kg serve` (`serve`), which runs the scheduler, the workers and the HTTP API."""

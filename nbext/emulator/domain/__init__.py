"""The emulator's domain: jobs, queue, workers, clock, rate limits, webhooks. No web framework."""

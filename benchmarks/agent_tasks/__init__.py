"""Small editing tasks for measuring the agent loop with a real model."""

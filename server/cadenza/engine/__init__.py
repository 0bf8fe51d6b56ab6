"""The agent loop: sessions, turns, events. Knows neither pygls nor httpx."""

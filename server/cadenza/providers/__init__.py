"""Model backends behind one ``Provider`` protocol."""

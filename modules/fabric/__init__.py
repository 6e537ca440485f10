"""The switch fabric: model, importers and Volcano HyperNodes."""

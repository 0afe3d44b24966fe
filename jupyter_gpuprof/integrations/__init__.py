"""Framework callbacks (Hugging Face Trainer, Lightning): the same run folder without a magic."""

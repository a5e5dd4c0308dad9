"""The teaching layer: paraphrased readings, class polls, demo packs, the teacher's sign-in."""

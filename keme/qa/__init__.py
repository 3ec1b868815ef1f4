"""Bottom-up QA synthesis over the event graph, and the verifier that proves each answer."""

"""noema_graph: LangGraph agents that plan, act, reflect and report what they did and cost."""

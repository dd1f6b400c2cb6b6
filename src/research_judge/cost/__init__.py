"""Prices, token estimates and the spending budget: what a run costs, before and after."""

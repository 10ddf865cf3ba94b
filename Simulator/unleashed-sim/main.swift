print("unleashed-sim")

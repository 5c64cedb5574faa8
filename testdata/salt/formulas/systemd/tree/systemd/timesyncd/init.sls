include:
  - .config

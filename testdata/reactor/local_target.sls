install_zsh:
  local.pkg.installed:
    - tgt: 'kernel:Linux'
    - tgt_type: grain
    - ret: smtp
    - timeout: 30
    - args:
      - name: zsh
      - fromrepo: updates

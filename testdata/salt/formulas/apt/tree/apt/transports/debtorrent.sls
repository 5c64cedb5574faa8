apt-transport-debtorrent:
  pkg.installed:
    - name: apt-transport-debtorrent

import CGPhoto2

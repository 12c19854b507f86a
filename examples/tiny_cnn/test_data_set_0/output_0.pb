
BlogitsJ(†J¾rİ>)ÈQ¾İ´ñ½P\>zŞ%=tN¾_•ç¼Í¿‚¾El¾
/* placeholder */
typedef int pt_placeholder_pt_features;

package derivatives

import "testing"

func TestSourceEntitiesAndNames(t *testing.T) {
	ents, err := SourceEntities("/d/sub-01_ses-a_task-rest_run-2_space-MNI152NLin2009cAsym_desc-preproc_bold.nii.gz")
	if err != nil {
		t.Fatal(err)
	}
	n, err := EntityName(ents, "degree", "map", ".nii.gz")
	if err != nil {
		t.Fatal(err)
	}
	if want := "sub-01_ses-a_task-rest_run-2_space-MNI152NLin2009cAsym_desc-degree_map.nii.gz"; n != want {
		t.Errorf("name %s, want %s", n, want)
	}
	if err := CheckName(n); err != nil {
		t.Error(err)
	}
	if d := EntityDir(ents); d != "sub-01/ses-a/func" {
		t.Errorf("dir %s", d)
	}
	for _, bad := range []string{"scan.nii.gz", "sub-01_bold.txt", "task-rest_sub-01_bold.nii.gz", "sub-0_1_bold.nii", "sub-01_foo-x_bold.nii.gz", "sub-01_run-1_task-a_bold.nii.gz"} {
		if _, err := SourceEntities(bad); err == nil {
			t.Errorf("SourceEntities(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"sub-01_desc-degree_map", "sub-01_desc-de_gree_map.nii.gz", "task-rest_sub-01_map.nii.gz",
		"sub-01_space-MNI_task-rest_map.nii.gz", "sub-01_desc-a_map.NII", "sub-01_desc-a_ma-p.nii.gz", "sub-01_sub-02_map.json"} {
		if err := CheckName(bad); err == nil {
			t.Errorf("CheckName(%q) accepted", bad)
		}
	}
	if _, err := EntityName(ents, "local_efficiency", "map", ".nii.gz"); err == nil {
		t.Error("EntityName accepted a desc with an underscore")
	}
}

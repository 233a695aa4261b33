// Package prepare is `npcorch prep`: it reads a raw dataset with package
// dataset's parser, plans every image the benchmark's tasks show per
// patient: the kinds of image its cohorts' tasks declare (Task.Images,
// through Registry.ImageNeeds: overviews, sequence panels, structure cards, plane
// groups of the T and N ranges, CarePath pages) as jobs of the imaging/prep
// executor, and turns the executor's results into the prepared manifest
// (dataset.Prepared), written as manifest.json beside the images.
//
// It owns the knowledge of which images a patient needs and where each
// lands in the manifest. It draws no pixel and writes no file itself: the
// executor renders, caches and writes (package imaging/prep), and it never
// writes inside the dataset.
package prepare

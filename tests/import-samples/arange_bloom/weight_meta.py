class Program_weight_tensor_meta_in_0:
	name = "in_0"
	original_name = "in_0"
	shape = [3, 10]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = 0.0
	std = 1.0
	data = None


